package producers

import (
	"context"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// evalBenchEpisodes is the size of the benchmarked evaluation: a final
// evaluation of 512 episodes of the default (ALFWorld-sized) household's
// in-distribution split.
const evalBenchEpisodes = 512

func evalBenchTasks(b *testing.B) (envs.Env, []schemas.TaskRef) {
	env, err := envs.New("household", nil)
	if err != nil {
		b.Fatal(err)
	}
	tasks, err := env.Tasks(envs.SplitEvalIn, 0, 1)
	if err != nil {
		b.Fatal(err)
	}
	refs := make([]schemas.TaskRef, evalBenchEpisodes)
	for i := range refs {
		refs[i] = rollout.TaskRefOf(tasks[i%len(tasks)])
	}
	return env, refs
}

// BenchmarkEvaluation plays a 512-episode evaluation of policy version 0
// per iteration: in-process (what the learner does with --eval-shards 1)
// with 1 or 2 episodes at a time, and in 2 shards queued on work.eval for
// 1 or 2 actors of one episode at a time each. It reports the wall
// seconds per evaluation: what a second actor saves when it has a core
// (or a machine) of its own.
func BenchmarkEvaluation(b *testing.B) {
	for _, parallel := range []int{1, 2} {
		b.Run(fmt.Sprintf("in-process/parallel=%d", parallel), func(b *testing.B) {
			env, refs := evalBenchTasks(b)
			p, err := policy.New(policy.Config{Seed: 7})
			if err != nil {
				b.Fatal(err)
			}
			tasks := make([]envs.Task, len(refs))
			for i, r := range refs {
				tasks[i] = rollout.TaskOf(r)
			}
			b.ResetTimer()
			for range b.N {
				if _, err := rollout.Evaluate(context.Background(), env, tasks, policy.NewAgent(p, false),
					rollout.EvalOptions{Seed: 5, Parallel: parallel}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/eval")
		})
	}
	for _, actors := range []int{1, 2} {
		b.Run(fmt.Sprintf("shards=2/actors=%d", actors), func(b *testing.B) {
			ctx, js := setup(b)
			_, refs := evalBenchTasks(b)
			rctx, stop := context.WithCancel(ctx)
			defer stop()
			for k := range actors {
				a, err := NewActor(js, ActorConfig{Run: testRun, Name: fmt.Sprintf("a%d", k), Parallel: 1, Logger: quietLogger()})
				if err != nil {
					b.Fatal(err)
				}
				go a.Run(rctx)
			}
			answered := make(chan struct{}, 16)
			sub, err := js.Conn().Subscribe(streams.Subjects(testRun).EvalAll, func(*nats.Msg) { answered <- struct{}{} })
			if err != nil {
				b.Fatal(err)
			}
			defer sub.Unsubscribe()
			b.ResetTimer()
			for i := range b.N {
				job := schemas.EvalShard{Run: testRun, Update: int64(i), PolicyVersion: 0, Split: envs.SplitEvalIn, Seed: 5, Env: "household"}
				for _, sh := range schemas.EvalShardsOf(job, refs, 2) {
					if _, err := streams.PublishEvalShard(ctx, js, sh); err != nil {
						b.Fatal(err)
					}
				}
				for range 2 {
					select {
					case <-answered:
					case <-ctx.Done():
						b.Fatalf("evaluation %d not answered: %v", i, ctx.Err())
					}
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/eval")
		})
	}
}
