package producers

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// fingerprint is what a trajectory's content is, less who made it and
// when: explored by any explorer in any shard, it must be the same. The
// PRM's labels (Reward, DenseReward) are rounded to 9 digits: the PRM
// scores a batch of steps at once and the last bits of a score depend on
// the batch's size, and so on the shard (prm's chunkEnd).
func fingerprint(t *testing.T, tr *schemas.Trajectory) string {
	t.Helper()
	c := *tr
	c.Producer, c.CreatedAt = "", time.Time{}
	c.Steps = slices.Clone(c.Steps)
	for i := range c.Steps {
		c.Steps[i].Reward = roundLabel(c.Steps[i].Reward)
		c.Steps[i].DenseReward = roundLabel(c.Steps[i].DenseReward)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func roundLabel(v float64) float64 { return math.Round(v*1e9) / 1e9 }

// exploreShards explores every shard of plan on a server of its own, one
// shard after another as an explorer given them would, and returns the
// stored trajectories by id and the shards' cycle.explored events.
func exploreShards(t *testing.T, plan schemas.CyclePlan) (map[string]string, []schemas.Event) {
	t.Helper()
	ctx, js := setup(t)
	x, err := NewExplorer(js, ExplorerConfig{Run: testRun, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(plan)
	e := schemas.Event{Type: schemas.EventCycleStarted, Run: testRun, Cycle: 2, Update: 6, Config: raw}
	for k := range plan.ShardCount() {
		if _, err := x.ExploreShard(ctx, e, plan, k); err != nil {
			t.Fatalf("shard %d of %d: %v", k, plan.ShardCount(), err)
		}
	}
	trajs := map[string]string{}
	for _, m := range collect(t, ctx, js, "traj.explore") {
		trajs[m.Trajectory.ID] = fingerprint(t, m.Trajectory)
	}
	var events []schemas.Event
	for _, m := range collect(t, ctx, js, "ctrl.cycle.explored") {
		events = append(events, *m.Event)
	}
	return trajs, events
}

// A cycle explored in 1, 2 or 3 shards publishes the same trajectories —
// same ids, seeds and steps — in every explorer mode, the trained one
// (whose shards each train the same π_B) included.
func TestExplorerShardsPublishWhatTheWholeCycleWould(t *testing.T) {
	if testing.Short() {
		t.Skip("explores every mode three times")
	}
	tests := []struct {
		name    string
		mode    schemas.ExplorerMode
		tilt    float64
		swapAll bool
	}{
		{name: "tilted", mode: schemas.ExplorerRandomPRM, tilt: 3},
		{name: "trained, swap all", mode: schemas.ExplorerRandomPRM, swapAll: true},
		{name: "frozen", mode: schemas.ExplorerFrozen},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := schemas.CyclePlan{Env: "household", EnvOptions: easy, Tasks: trainTasks(t, 5), Updates: 2, Seed: 9, ExploreSettings: schemas.ExploreSettings{GroupSize: 2, Collect: 2, SwapAll: tt.swapAll, Mode: tt.mode, Tilt: tt.tilt}}
			whole, events := exploreShards(t, plan)
			if len(events) != 1 || events[0].Trajectories != int64(len(whole)) {
				t.Fatalf("one shard: %d cycle.explored events for %d trajectories, want 1 announcing them all", len(events), len(whole))
			}
			for _, shards := range []int{2, 3} {
				plan.Shards = shards
				got, events := exploreShards(t, plan)
				if !maps.Equal(got, whole) {
					t.Errorf("%d shards: %d trajectories differ from the whole cycle's %d (ids %v, want %v)", shards,
						len(got), len(whole), slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(whole)))
				}
				var sum int64
				seen := map[int64]bool{}
				for _, e := range events {
					sum += e.Trajectories
					seen[e.Shard] = true
					if e.Shards != int64(shards) {
						t.Errorf("%d shards: cycle.explored names %d shards", shards, e.Shards)
					}
				}
				if len(events) != shards || len(seen) != shards || sum != int64(len(whole)) {
					t.Errorf("%d shards: %d events for shards %v announcing %d trajectories, want one per shard announcing %d",
						shards, len(events), seen, sum, len(whole))
				}
			}
		})
	}
}

// publishCycle announces a cycle with plan (recorded in the run's cycle
// record, then published) and queues its shards, as the learner does.
func publishCycle(t testing.TB, ctx context.Context, js jetstream.JetStream, cycle int64, plan schemas.CyclePlan) {
	t.Helper()
	raw, _ := json.Marshal(plan)
	e := schemas.Event{Type: schemas.EventCycleStarted, Run: testRun, Cycle: cycle, Config: raw, Time: time.Now().UTC()}
	if _, err := streams.AnnounceCycle(ctx, js, e); err != nil {
		t.Fatal(err)
	}
	for _, sh := range schemas.ShardsOf(testRun, cycle, 0, plan) {
		if _, err := streams.PublishExploreShard(ctx, js, sh); err != nil {
			t.Fatal(err)
		}
	}
}

// Two explorers running side by side share a cycle's shards through the
// work queue: every shard is explored once and announced.
func TestExplorersShareACyclesShards(t *testing.T) {
	ctx, js := setup(t)
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 2)
	for _, name := range []string{"x1", "x2"} {
		x, err := NewExplorer(js, ExplorerConfig{Run: testRun, Name: name, Parallel: 1, Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		go func() { done <- x.Run(rctx) }()
	}
	plan := schemas.CyclePlan{Env: "household", EnvOptions: easy, Tasks: trainTasks(t, 4), Seed: 3, ExploreSettings: schemas.ExploreSettings{GroupSize: 1, Collect: 2, Mode: schemas.ExplorerFrozen, Shards: 4}}
	publishCycle(t, ctx, js, 0, plan)
	var events []streams.Message
	for len(events) < 4 {
		if ctx.Err() != nil {
			t.Fatalf("%d of 4 shards announced", len(events))
		}
		time.Sleep(20 * time.Millisecond)
		events = collect(t, ctx, js, "ctrl.cycle.explored")
	}
	stop()
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	shards := map[int64]int64{}
	for _, m := range events {
		shards[m.Event.Shard] += m.Event.Trajectories
	}
	if len(shards) != 4 {
		t.Errorf("announced shards %v, want 0..3 once each", shards)
	}
	trajs := collect(t, ctx, js, "traj.explore")
	ids := map[string]bool{}
	for _, m := range trajs {
		ids[m.Trajectory.ID] = true
	}
	if len(trajs) != 4*2 || len(ids) != len(trajs) {
		t.Errorf("stored %d trajectories (%d ids), want 8 distinct", len(trajs), len(ids))
	}
}

// A shard that is not one of its cycle's plan — another shard count, or a
// task range the plan does not give it — is dead-lettered with the reason,
// and nothing is explored.
func TestExplorerDeadLettersAShardItsPlanDoesNotHave(t *testing.T) {
	ctx, js := setup(t)
	plan := schemas.CyclePlan{Env: "household", EnvOptions: easy, Tasks: trainTasks(t, 2), ExploreSettings: schemas.ExploreSettings{GroupSize: 1, Collect: 1, Mode: schemas.ExplorerFrozen, Shards: 2}}
	raw, _ := json.Marshal(plan)
	e := schemas.Event{Type: schemas.EventCycleStarted, Run: testRun, Cycle: 0, Config: raw, Time: time.Now().UTC()}
	if _, err := streams.AnnounceCycle(ctx, js, e); err != nil {
		t.Fatal(err)
	}
	for _, sh := range []schemas.ExploreShard{
		{Run: testRun, Shard: 0, Shards: 3, TaskStart: 0, TaskEnd: 1},
		{Run: testRun, Shard: 1, Shards: 2, TaskStart: 0, TaskEnd: 2},
	} {
		if _, err := streams.PublishExploreShard(ctx, js, sh); err != nil {
			t.Fatal(err)
		}
	}
	x, err := NewExplorer(js, ExplorerConfig{Run: testRun, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- x.Run(rctx) }()
	for len(collect(t, ctx, js, "dlq")) < 2 {
		if ctx.Err() != nil {
			t.Fatal("the foreign shards were not dead-lettered")
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for i, m := range collect(t, ctx, js, "dlq") {
		want := []string{"but the cycle's plan has 2", "but the plan gives shard 1 tasks [1, 2)"}[i]
		if reason := m.Headers.Get(streams.HeaderDLQReason); !strings.Contains(reason, want) {
			t.Errorf("dead letter %d: reason %q, want it to mention %q", i, reason, want)
		}
	}
	if n := len(collect(t, ctx, js, "traj.explore")); n != 0 {
		t.Errorf("%d trajectories explored for shards of no plan, want 0", n)
	}
}

// A shard whose cycle is not announced (yet) finds no plan: the error is
// one to retry on, not a rejection, and once the learner's cycle.started
// is on the bus the plan is found.
func TestExplorerFindsAPlanOnceItsCycleIsAnnounced(t *testing.T) {
	ctx, js := setup(t)
	x, err := NewExplorer(js, ExplorerConfig{Run: testRun, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = x.plans.get(ctx, 5, 0)
	var rej *streams.RejectError
	if err == nil || errors.As(err, &rej) {
		t.Fatalf("plan of an unannounced cycle: got %v, want an error to retry on", err)
	}
	plan := schemas.CyclePlan{Env: "household", EnvOptions: easy, Tasks: trainTasks(t, 1), ExploreSettings: schemas.ExploreSettings{GroupSize: 1, Collect: 1, Mode: schemas.ExplorerFrozen}}
	publishCycle(t, ctx, js, 5, plan)
	if _, got, err := x.plans.get(ctx, 5, 0); err != nil || got.Seed != plan.Seed || len(got.Tasks) != 1 {
		t.Fatalf("plan once announced: got %+v, %v", got, err)
	}
	// Only the latest cycles' plans are kept: cycle 5's is dropped once
	// cycle 5+keptCycles is announced and read, and read again from the
	// bus for a straggling shard of it while the learner's record holds it.
	publishCycle(t, ctx, js, 5+keptCycles, plan)
	if _, _, err := x.plans.get(ctx, 5+keptCycles, 0); err != nil {
		t.Fatal(err)
	}
	if _, ok := x.plans.started[5]; ok || len(x.plans.started) != 1 {
		t.Errorf("after cycle %d: %d plans kept, cycle 5's among them (%v); want it dropped", 5+keptCycles, len(x.plans.started), ok)
	}
	if _, got, err := x.plans.get(ctx, 5, 0); err != nil || got.Seed != plan.Seed {
		t.Errorf("a straggling shard of cycle 5: %+v, %v; want its plan read again", got, err)
	}
}
