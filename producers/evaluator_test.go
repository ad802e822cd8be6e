package producers

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// evalShards splits an evaluation of n train tasks of policy version 0 into
// shards.
func evalShards(t *testing.T, n, shards int) ([]schemas.EvalShard, []schemas.TaskRef) {
	tasks := trainTasks(t, n)
	job := schemas.EvalShard{Run: testRun, Update: 0, PolicyVersion: 0, Split: envs.SplitTrain, Seed: 17,
		Env: "household", EnvOptions: easy}
	return schemas.EvalShardsOf(job, tasks, shards), tasks
}

// An actor answers each evaluation shard queued on work.eval with what the
// in-process evaluation of the same episodes gives, on eval.<update>.
func TestActorPlaysEvaluationShards(t *testing.T) {
	ctx, js := setup(t)
	shards, tasks := evalShards(t, 10, 3)
	a, err := NewActor(js, ActorConfig{Run: testRun, Name: "a1", Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- a.Run(rctx) }()
	for _, sh := range shards {
		if _, err := streams.PublishEvalShard(ctx, js, sh); err != nil {
			t.Fatal(err)
		}
	}
	for len(collect(t, ctx, js, streams.EvalKind(0))) < len(shards) {
		if ctx.Err() != nil {
			t.Fatal("the shards were not answered")
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var got []rollout.EpisodeResult
	for k, m := range collect(t, ctx, js, streams.EvalKind(0)) {
		if m.EvalResult == nil {
			t.Fatalf("result %d: %v", k, m.Err)
		}
		if err := m.EvalResult.Answers(shards[m.EvalResult.Shard]); err != nil || m.EvalResult.Evaluator != "a1" {
			t.Errorf("result %d by %q: %v", k, m.EvalResult.Evaluator, err)
		}
		got = append(got, rollout.EpisodeResults(m.EvalResult.Results)...)
	}
	env, err := envs.New("household", easy)
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.New(policy.Config{Seed: 7}) // setup's version 0
	if err != nil {
		t.Fatal(err)
	}
	envTasks := make([]envs.Task, len(tasks))
	for i, r := range tasks {
		envTasks[i] = rollout.TaskOf(r)
	}
	want, err := rollout.Evaluate(ctx, env, envTasks, policy.NewAgent(p, false), rollout.EvalOptions{Seed: 17, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rep := rollout.NewReport(env, got); !reflect.DeepEqual(rep, want) {
		t.Errorf("the shards' report %+v, want the in-process %+v", rep, want)
	}
}

// playersOnly is a backend that can play rollouts but not evaluations.
type playersOnly struct{ Backend }

// Shards no actor can serve are dead-lettered with the reason, and the
// actor goes on serving: a backend that cannot evaluate, a shard over the
// actor's step budget.
func TestActorDeadLettersEvaluationShardsItCannotPlay(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  ActorConfig
		want string
	}{
		{"a backend without evaluations", ActorConfig{Backend: playersOnly{}}, "cannot play evaluations"},
		{"over the step budget", ActorConfig{StepBudget: 10}, "over the actor's budget of 10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, js := setup(t)
			shards, _ := evalShards(t, 4, 1)
			cfg := tc.cfg
			cfg.Run, cfg.Logger = testRun, quietLogger()
			a, err := NewActor(js, cfg)
			if err != nil {
				t.Fatal(err)
			}
			rctx, stop := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- a.Run(rctx) }()
			if _, err := streams.PublishEvalShard(ctx, js, shards[0]); err != nil {
				t.Fatal(err)
			}
			for len(collect(t, ctx, js, "dlq")) == 0 {
				if ctx.Err() != nil {
					t.Fatal("the shard was not dead-lettered")
				}
				time.Sleep(20 * time.Millisecond)
			}
			stop()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if dl := collect(t, ctx, js, "dlq"); !strings.Contains(dl[0].Headers.Get(streams.HeaderDLQReason), tc.want) {
				t.Errorf("dead-letter reason %q, want one naming %q", dl[0].Headers.Get(streams.HeaderDLQReason), tc.want)
			}
			if n := len(collect(t, ctx, js, streams.KindEval)); n != 0 {
				t.Errorf("%d results of a shard the actor cannot play", n)
			}
		})
	}
}
