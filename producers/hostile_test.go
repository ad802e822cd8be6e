package producers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// A schema-valid request of 4,096 tasks × 1,024 rollouts (400 KB of JSON)
// used to run the actor out of memory, and its redeliveries every actor
// after it. It must be dead-lettered with its reason, and the actor must
// go on serving.
func TestActorDeadLettersRequestsOverItsBudget(t *testing.T) {
	ctx, js := setup(t)
	a, err := NewActor(js, ActorConfig{Run: testRun, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- a.Run(rctx) }()
	huge := rolloutRequest(t)
	huge.ID, huge.GroupSize = "u0-v0-huge", 1024
	for len(huge.Tasks) < 4096 {
		huge.Tasks = append(huge.Tasks, huge.Tasks[len(huge.Tasks)%2])
	}
	if _, err := streams.PublishRollout(ctx, js, huge); err != nil {
		t.Fatal(err)
	}
	if _, err := streams.PublishRollout(ctx, js, rolloutRequest(t)); err != nil {
		t.Fatal(err)
	}
	for len(collect(t, ctx, js, "traj.onpolicy")) < 6 {
		if ctx.Err() != nil {
			t.Fatal("the valid request after the huge one was not served")
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	dl := collect(t, ctx, js, "dlq")
	if len(dl) != 1 || !strings.Contains(dl[0].Headers.Get(streams.HeaderDLQReason), "over the actor's budget") {
		t.Fatalf("dead letters %+v: want the huge request, rejected as over the budget", dl)
	}
}

func TestActorConfigRefusesANegativeBudget(t *testing.T) {
	if err := (ActorConfig{Run: testRun, StepBudget: -1}).Validate(); err == nil {
		t.Error("a negative step budget was accepted")
	}
}

// The explorer used to run a cycle of another run that appeared on its
// run's subjects. Such a shard is dead-lettered and nothing explored; a
// cycle.started of another run on the run's subject is no plan for the
// run's shards either.
func TestExplorerDeadLettersCyclesOfAnotherRun(t *testing.T) {
	ctx, js := setup(t)
	x, err := NewExplorer(js, ExplorerConfig{Run: testRun, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	plan := schemas.CyclePlan{Env: "household", EnvOptions: easy, Tasks: trainTasks(t, 1), ExploreSettings: schemas.ExploreSettings{GroupSize: 1, Collect: 1, Mode: schemas.ExplorerFrozen}}
	raw, _ := json.Marshal(plan)
	e := schemas.Event{Type: schemas.EventCycleStarted, Run: "other", Cycle: 0, Config: raw, Time: time.Unix(1700000000, 0).UTC()}
	shard := schemas.ShardsOf("other", 0, 0, plan)[0]
	for subject, v := range map[string]any{streams.Subjects(testRun).Ctrl(schemas.EventCycleStarted): e,
		streams.Subjects(testRun).WorkExplore: shard} {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, subject, data); err != nil {
			t.Fatal(err)
		}
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- x.Run(rctx) }()
	for len(collect(t, ctx, js, "dlq")) == 0 {
		if ctx.Err() != nil {
			t.Fatal("the other run's shard was not dead-lettered")
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if dl := collect(t, ctx, js, "dlq"); !strings.Contains(dl[0].Headers.Get(streams.HeaderDLQReason), `belongs to run "other"`) {
		t.Errorf("dead-letter reason %q", dl[0].Headers.Get(streams.HeaderDLQReason))
	}
	if n := len(collect(t, ctx, js, "traj.explore")); n != 0 {
		t.Errorf("%d explorer trajectories for another run's cycle, want 0", n)
	}
	if _, _, err := x.plans.get(ctx, 0, 0); err == nil {
		t.Error("the other run's cycle.started was taken for a plan of the run")
	}
}

// A schema-valid cycle.started with a far cycle number used to empty the
// explorer's plan cache (only the latest cycles' plans were kept, counted
// from the highest cycle seen): every real shard after it found no plan
// and was dead-lettered, and the run trained without exploration, also
// after a restart. The explorer now takes only the cycle.started events
// the learner's cycle record holds: a far cycle, another plan for the
// cycle in progress, a plan published ahead of the learner's for its next
// cycle — all are passed over, by a running explorer and by one started
// afterwards.
func TestExplorerTakesOnlyTheLearnersPlans(t *testing.T) {
	ctx, js := setup(t)
	genuine := schemas.CyclePlan{Env: "household", EnvOptions: easy, Tasks: trainTasks(t, 2), Seed: 1, ExploreSettings: schemas.ExploreSettings{GroupSize: 1, Collect: 1, Mode: schemas.ExplorerFrozen}}
	forged := genuine
	forged.Collect = 3
	forge := func(cycle int64, plan schemas.CyclePlan) {
		raw, _ := json.Marshal(plan)
		e := schemas.Event{Type: schemas.EventCycleStarted, Run: testRun, Cycle: cycle, Config: raw, Time: time.Now().UTC()}
		h := nats.Header{}
		h.Set(streams.HeaderMsgID, fmt.Sprintf("forged-%d-%d", cycle, plan.Collect))
		data, _ := json.Marshal(e)
		if _, err := streams.Publish(ctx, js, streams.Subjects(testRun).Ctrl(schemas.EventCycleStarted), data, h); err != nil {
			t.Fatal(err)
		}
	}
	explore := func(want int) {
		t.Helper()
		x, err := NewExplorer(js, ExplorerConfig{Run: testRun, Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		rctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- x.Run(rctx) }()
		for len(collect(t, ctx, js, "ctrl.cycle.explored")) < want && len(collect(t, ctx, js, "dlq")) == 0 {
			if ctx.Err() != nil {
				t.Fatalf("%d of %d cycles explored", len(collect(t, ctx, js, "ctrl.cycle.explored")), want)
			}
			time.Sleep(20 * time.Millisecond)
		}
		stop()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	publishCycle(t, ctx, js, 0, genuine)
	forge(9000000000000000000, genuine)
	forge(0, forged) // another plan for the cycle in progress
	forge(1, forged) // a plan for the learner's next cycle, ahead of it
	explore(1)
	publishCycle(t, ctx, js, 1, genuine)
	explore(2) // a restarted explorer reads every event again
	if dl := collect(t, ctx, js, "dlq"); len(dl) != 0 {
		t.Fatalf("dead letters %q: the learner's shards found no plan", dl[0].Headers.Get(streams.HeaderDLQReason))
	}
	for _, m := range collect(t, ctx, js, "ctrl.cycle.explored") {
		if m.Event.Trajectories != 2 {
			t.Errorf("cycle %d: %d trajectories explored, want the learner's plan's 2", m.Event.Cycle, m.Event.Trajectories)
		}
	}
	fresh, err := NewExplorer(js, ExplorerConfig{Run: testRun, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	for c := range int64(2) {
		if _, plan, err := fresh.plans.get(ctx, c, 0); err != nil || plan.Collect != genuine.Collect {
			t.Errorf("a fresh explorer's plan of cycle %d: collect %d (%v), want the learner's %d", c, plan.Collect, err, genuine.Collect)
		}
	}
	if _, _, err := fresh.plans.get(ctx, 9000000000000000000, 0); err == nil {
		t.Error("the far cycle's forged plan was found")
	}
}
