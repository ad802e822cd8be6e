package producers

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// hugePlan is the plan that took an explorer with no budget to 5 GB in
// 80 s: 4,096 tasks × 1,024 rollouts × 1,000 updates in one shard.
func hugePlan(t testing.TB) schemas.CyclePlan {
	tasks := trainTasks(t, 4)
	for len(tasks) < schemas.MaxRolloutTasks {
		tasks = append(tasks, tasks[len(tasks)%4])
	}
	return schemas.CyclePlan{Env: "household", EnvOptions: easy, Tasks: tasks, Updates: schemas.MaxPlanUpdates, ExploreSettings: schemas.ExploreSettings{GroupSize: 1024, Collect: 1, Mode: schemas.ExplorerRandomPRM}}
}

func TestShardStepsCountWhatTheModePlays(t *testing.T) {
	env, err := envs.New("household", nil) // 50-step episodes
	if err != nil {
		t.Fatal(err)
	}
	tasks := make([]schemas.TaskRef, 140)
	trained := schemas.CyclePlan{Tasks: tasks, Updates: 10, ExploreSettings: schemas.ExploreSettings{GroupSize: 4, Collect: 1, Shards: 2}}
	tilted := trained
	tilted.Tilt = 3
	frozen := trained
	frozen.Mode, frozen.Collect = schemas.ExplorerFrozen, 0
	for _, tc := range []struct {
		name        string
		plan        schemas.CyclePlan
		held, total int64
	}{
		// the suites' largest cycle: 140 tasks × 4 rollouts a training
		// update, shard 0 collects 70 tasks × 1
		{"trained", trained, 140 * 4 * 50, 10*140*4*50 + 70*50},
		{"tilted", tilted, 70 * 50, 70 * 50},
		{"frozen, a group collected", frozen, 70 * 4 * 50, 70 * 4 * 50},
	} {
		held, total := shardSteps(tc.plan, env, 0)
		if held != tc.held || total != tc.total {
			t.Errorf("%s: %d steps held at once, %d in all; want %d and %d", tc.name, held, total, tc.held, tc.total)
		}
		if held > DefaultExploreStepBudget || total > DefaultShardStepBudget {
			t.Errorf("%s: the suites' largest cycle is over the default budgets", tc.name)
		}
	}
	if held, total := shardSteps(hugePlan(t), env, 0); held <= DefaultExploreStepBudget || total <= DefaultShardStepBudget {
		t.Errorf("the 4,096 × 1,024 × 1,000 plan holds %d steps at once and takes %d: within the default budgets", held, total)
	}
}

// An explorer had no step budget: a valid plan of 4,096 tasks × 1,024
// rollouts × 1,000 updates took it to 5 GB in 80 s. A shard over either
// budget is dead-lettered with its reason before anything is played, and
// the explorer goes on with the next.
func TestExplorerDeadLettersShardsOverItsBudgets(t *testing.T) {
	ctx, js := setup(t)
	x, err := NewExplorer(js, ExplorerConfig{Run: testRun, Logger: quietLogger(), StepBudget: 2000, ShardBudget: 5000})
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- x.Run(rctx) }()
	frozen := func(tasks, collect int) schemas.CyclePlan { // easy episodes: 30 steps
		return schemas.CyclePlan{Env: "household", EnvOptions: easy, Tasks: trainTasks(t, tasks), ExploreSettings: schemas.ExploreSettings{GroupSize: 1, Collect: collect, Mode: schemas.ExplorerFrozen}}
	}
	trained := frozen(2, 1)
	trained.Mode, trained.GroupSize, trained.Updates = schemas.ExplorerRandomPRM, 4, 40 // 240 steps an update, 9,660 in all
	for cycle, plan := range []schemas.CyclePlan{hugePlan(t), frozen(4, 20), trained, frozen(2, 1)} {
		publishCycle(t, ctx, js, int64(cycle), plan)
	}
	for len(collect(t, ctx, js, "ctrl.cycle.explored")) == 0 {
		if ctx.Err() != nil {
			t.Fatal("the shard within the budgets, queued after those over them, was not explored")
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ev := collect(t, ctx, js, "ctrl.cycle.explored"); len(ev) != 1 || ev[0].Event.Cycle != 3 {
		t.Errorf("explored %d shards, want only cycle 3's", len(ev))
	}
	dl := collect(t, ctx, js, "dlq")
	want := []string{"over the explorer's step budget of 2000", "over the explorer's step budget of 2000", "over the explorer's shard budget of 5000"}
	if len(dl) != len(want) {
		t.Fatalf("%d dead letters, want the %d shards over a budget", len(dl), len(want))
	}
	for i, m := range dl {
		if reason := m.Headers.Get(streams.HeaderDLQReason); !strings.Contains(reason, want[i]) {
			t.Errorf("dead letter %d: %q, want it to say %q", i, reason, want[i])
		}
	}
}

func TestExplorerConfigRefusesNegativeBudgets(t *testing.T) {
	for _, cfg := range []ExplorerConfig{{Run: testRun, StepBudget: -1}, {Run: testRun, ShardBudget: -1}} {
		if err := cfg.Validate(); err == nil {
			t.Errorf("%+v: a negative budget was accepted", cfg)
		}
	}
}

// countingBackend plays the built-in policy and counts the episodes it is
// asked for, calling at once it is asked for the n-th.
type countingBackend struct {
	p      *policy.Policy
	n      int64
	at     func()
	played atomic.Int64
}

func (b *countingBackend) Player(context.Context, int64) (rollout.Player, error) { return b, nil }

func (b *countingBackend) Play(ctx context.Context, env envs.Env, ep rollout.Episode) (*schemas.Trajectory, error) {
	if b.played.Add(1) == b.n {
		b.at()
	}
	return rollout.PolicyPlayer{Policy: b.p}.Play(ctx, env, ep)
}

// An explorer told to stop went on with the shard in hand for as long as
// its consumer's drain allowed (30 s), starting episode after episode: it
// ignored SIGTERM for 25 s. It gives the shard back at once, between two
// episodes, for another explorer to redo.
func TestExplorerGivesItsShardBackWhenStopped(t *testing.T) {
	ctx, js := setup(t)
	p, err := policy.New(policy.Config{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	const parallel, stopAt = 2, 10
	backend := &countingBackend{p: p, n: stopAt, at: stop}
	x, err := NewExplorer(js, ExplorerConfig{Run: testRun, Logger: quietLogger(), Parallel: parallel, Backend: backend})
	if err != nil {
		t.Fatal(err)
	}
	plan := schemas.CyclePlan{Env: "household", EnvOptions: easy, Tasks: trainTasks(t, 16), ExploreSettings: schemas.ExploreSettings{GroupSize: 1, Collect: 256, Mode: schemas.ExplorerFrozen}} // 4,096 episodes
	publishCycle(t, ctx, js, 0, plan)
	if err := x.Run(rctx); err != nil {
		t.Fatal(err)
	}
	if got := backend.played.Load(); got > stopAt+parallel+1 {
		t.Errorf("%d episodes started, want at most %d: the stop came at episode %d", got, stopAt+parallel+1, stopAt)
	}
	if n := len(collect(t, ctx, js, "ctrl.cycle.explored")) + len(collect(t, ctx, js, "dlq")); n != 0 {
		t.Errorf("%d shards announced or dead-lettered, want the shard given back", n)
	}
}
