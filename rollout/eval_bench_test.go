package rollout_test

import (
	"context"
	"testing"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/rollout"
)

// BenchmarkEvaluate plays a 512-episode evaluation of an untrained policy
// on the default household's in-distribution split, one episode at a time
// (the in-process evaluation's core), and reports seconds per evaluation.
func BenchmarkEvaluate(b *testing.B) {
	env, err := envs.New("household", nil)
	if err != nil {
		b.Fatal(err)
	}
	split, err := env.Tasks(envs.SplitEvalIn, 0, 1)
	if err != nil {
		b.Fatal(err)
	}
	tasks := make([]envs.Task, 512)
	for i := range tasks {
		tasks[i] = split[i%len(split)]
	}
	p, err := policy.New(policy.Config{Seed: 7})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := rollout.Evaluate(context.Background(), env, tasks, policy.NewAgent(p, false), rollout.EvalOptions{Seed: 5, Parallel: 1}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/eval")
}
