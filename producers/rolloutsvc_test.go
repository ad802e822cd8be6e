package producers

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/envs"
	_ "github.com/rspo-dev/rspo/envs/household"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

const testRun = "prod"

var easy = map[string]string{"preset": "easy"}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(&strings.Builder{}, nil))
}

// setup starts a server and stores policy version 0 of testRun.
func setup(t testing.TB) (context.Context, jetstream.JetStream) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	_, js := streamstest.Connect(t, streamstest.RunServer(t))
	p, err := policy.New(policy.Config{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := streams.PutSnapshot(ctx, js, streams.BucketPolicy, streams.PolicyObject(testRun, 0), b); err != nil {
		t.Fatal(err)
	}
	return ctx, js
}

func trainTasks(t testing.TB, n int) []schemas.TaskRef {
	t.Helper()
	env, err := envs.New("household", easy)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := env.Tasks(envs.SplitTrain, n, 11)
	if err != nil {
		t.Fatal(err)
	}
	refs := make([]schemas.TaskRef, len(tasks))
	for i, task := range tasks {
		refs[i] = rollout.TaskRefOf(task)
	}
	return refs
}

func rolloutRequest(t *testing.T) schemas.RolloutRequest {
	return schemas.RolloutRequest{ID: "u0-v0-0", Run: testRun, Source: schemas.SourceOnPolicy, Env: "household",
		EnvOptions: easy, Tasks: trainTasks(t, 2), GroupSize: 3, Seed: 5}
}

// collect replays a subject of testRun.
func collect(t testing.TB, ctx context.Context, js jetstream.JetStream, subject streams.SubjectKind) []streams.Message {
	t.Helper()
	var out []streams.Message
	err := streams.Replay(ctx, js, streams.ReplayOptions{Run: testRun, Subject: subject}, func(m streams.Message) error {
		out = append(out, m)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestActorServesRequestsDeterministically(t *testing.T) {
	ctx, js := setup(t)
	req := rolloutRequest(t)
	a, err := NewActor(js, ActorConfig{Run: testRun, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	first, err := a.Serve(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	// A second actor serving the same request (a redelivery after a crash)
	// reproduces the same trajectories, and the stream stores them once.
	b, _ := NewActor(js, ActorConfig{Run: testRun, Name: "other", Parallel: 1, Logger: quietLogger()})
	second, err := b.Serve(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	stored := collect(t, ctx, js, "traj.onpolicy")
	if got, want := len(stored), 6; got != want {
		t.Fatalf("stored trajectories: got %d, want %d", got, want)
	}
	for k, tr := range first {
		i, j := k/req.GroupSize, k%req.GroupSize
		if tr.ID != rollout.RequestTrajectoryID(req, i, j) || tr.GroupID != rollout.RequestGroupID(req, req.Tasks[i]) {
			t.Errorf("trajectory %d: id %q group %q", k, tr.ID, tr.GroupID)
		}
		if len(tr.Steps) != len(second[k].Steps) || tr.Steps[0].Action != second[k].Steps[0].Action {
			t.Errorf("trajectory %d differs between two servings of one request", k)
		}
		for _, s := range tr.Steps {
			if s.BehaviorLogProb > 0 || s.ActionIndex < 0 || s.Admissible[s.ActionIndex] != s.Action {
				t.Fatalf("trajectory %d: bad step %+v", k, s)
			}
		}
	}
}

func TestActorDeadLettersBadRequestsAndKeepsServing(t *testing.T) {
	ctx, js := setup(t)
	a, err := NewActor(js, ActorConfig{Run: testRun, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- a.Run(rctx) }()
	subj := streams.Subjects(testRun).WorkRollout
	if _, err := js.Publish(ctx, subj, []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	bad := rolloutRequest(t)
	bad.ID, bad.Env = "u0-v0-bad", "zoo"
	raw, _ := json.Marshal(bad)
	if _, err := js.Publish(ctx, subj, raw); err != nil {
		t.Fatal(err)
	}
	if _, err := streams.PublishRollout(ctx, js, rolloutRequest(t)); err != nil {
		t.Fatal(err)
	}
	for len(collect(t, ctx, js, "traj.onpolicy")) < 6 {
		if ctx.Err() != nil {
			t.Fatal("the valid request after the bad ones was not served")
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	dl := collect(t, ctx, js, "dlq")
	if len(dl) != 2 {
		t.Fatalf("dead letters: got %d, want 2", len(dl))
	}
	for i, want := range []string{"not valid JSON", "unknown environment"} {
		if reason := dl[i].Headers.Get(streams.HeaderDLQReason); !strings.Contains(reason, want) {
			t.Errorf("dead letter %d reason %q, want it to mention %q", i, reason, want)
		}
	}
}

func TestExplorerPublishesWhatItsPlanAsks(t *testing.T) {
	tests := []struct {
		name      string
		mode      schemas.ExplorerMode
		swapAll   bool
		collect   int
		tilt      float64
		published int // tasks × (updates × group if swap-all + collect)
		shaped    bool
	}{
		{name: "frozen copy, final collection", mode: schemas.ExplorerFrozen, published: 2 * 2},
		{name: "random PRM, final collection", mode: schemas.ExplorerRandomPRM, published: 2 * 2, shaped: true},
		{name: "random PRM, swap all", mode: schemas.ExplorerRandomPRM, swapAll: true, published: 2 * (2*3 + 2), shaped: true},
		// A tilted explorer takes no training rollouts: it publishes its
		// collection only, a group's worth when the plan collects none.
		{name: "random PRM, tilted", mode: schemas.ExplorerRandomPRM, tilt: 3, published: 2 * 2, shaped: true},
		{name: "random PRM, tilted, swap all", mode: schemas.ExplorerRandomPRM, tilt: 3, swapAll: true, collect: -1, published: 2 * 3, shaped: true},
		{name: "frozen copy ignores the tilt", mode: schemas.ExplorerFrozen, tilt: 3, published: 2 * 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, js := setup(t)
			x, err := NewExplorer(js, ExplorerConfig{Run: testRun, Logger: quietLogger()})
			if err != nil {
				t.Fatal(err)
			}
			collectN := 2
			if tt.collect != 0 {
				collectN = max(0, tt.collect)
			}
			plan := schemas.CyclePlan{Env: "household", EnvOptions: easy, Tasks: trainTasks(t, 2), Updates: 2, Seed: 9, ExploreSettings: schemas.ExploreSettings{GroupSize: 3, Collect: collectN, SwapAll: tt.swapAll, Mode: tt.mode, Tilt: tt.tilt}}
			raw, _ := json.Marshal(plan)
			e := schemas.Event{Type: schemas.EventCycleStarted, Run: testRun, Cycle: 4, Config: raw}
			res, err := x.Explore(ctx, e, plan)
			if err != nil {
				t.Fatal(err)
			}
			if res.Published != tt.published || res.Shaped != tt.shaped {
				t.Errorf("got %d published (shaped %v), want %d (shaped %v)", res.Published, res.Shaped, tt.published, tt.shaped)
			}
			trajs := collect(t, ctx, js, "traj.explore")
			if len(trajs) != tt.published {
				t.Fatalf("stored: got %d, want %d", len(trajs), tt.published)
			}
			var steps int64
			for _, m := range trajs {
				tr := m.Trajectory
				steps += int64(len(tr.Steps))
				if tr.Cycle != 4 || tr.Source != schemas.SourceExplore {
					t.Errorf("trajectory %s: cycle %d source %s", tr.ID, tr.Cycle, tr.Source)
				}
				if dense := tr.Steps[0].DenseReward; tt.shaped != (dense != 0) {
					t.Errorf("trajectory %s: dense reward %v with shaping %v", tr.ID, dense, tt.shaped)
				}
			}
			if res.EnvSteps < steps {
				t.Errorf("env steps %d below the published trajectories' %d", res.EnvSteps, steps)
			}
			if tt.tilt > 0 && res.EnvSteps != steps {
				t.Errorf("tilted explorer took %d env steps, but its published rollouts hold %d: it must not train", res.EnvSteps, steps)
			}
			ev := collect(t, ctx, js, "ctrl.cycle.explored")
			if len(ev) != 1 || ev[0].Event.Cycle != 4 || ev[0].Event.Trajectories != int64(tt.published) {
				t.Errorf("cycle.explored: %+v", ev)
			}
		})
	}
}

func TestExplorerRefusesBadSettings(t *testing.T) {
	if err := (ExplorerConfig{Run: "bad run"}).Validate(); err == nil {
		t.Errorf("run name %q accepted", "bad run")
	}
	ctx, js := setup(t)
	x, err := NewExplorer(js, ExplorerConfig{Run: testRun, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	for _, mod := range []func(*schemas.CyclePlan){
		func(p *schemas.CyclePlan) { p.Mode = "psychic" },
		func(p *schemas.CyclePlan) { p.GateAUC = 1.5 },
		func(p *schemas.CyclePlan) { p.Tilt = -1 },
		func(p *schemas.CyclePlan) { p.Tilt, p.PRMNoise = 2, 0.1 },
		func(p *schemas.CyclePlan) { p.Trainer = json.RawMessage(`{"Algo":"sarsa"}`) },
	} {
		plan := schemas.CyclePlan{Env: "household", EnvOptions: easy, Tasks: trainTasks(t, 1), Updates: 1, ExploreSettings: schemas.ExploreSettings{GroupSize: 1, Collect: 1, Mode: schemas.ExplorerFrozen}}
		mod(&plan)
		e := schemas.Event{Type: schemas.EventCycleStarted, Run: testRun, Cycle: 1}
		var rej *streams.RejectError
		if _, err := x.Explore(ctx, e, plan); !errors.As(err, &rej) {
			t.Errorf("plan %+v: got %v, want a rejection", plan, err)
		}
	}
}

// Two runs on one server each get their own actors: the work queue's
// consumers are scoped by run.
func TestActorsOfTwoRunsShareAServer(t *testing.T) {
	ctx, js := setup(t)
	other := "prod2"
	b, err := streams.GetSnapshot(ctx, js, streams.BucketPolicy, streams.PolicyObject(testRun, 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := streams.PutSnapshot(ctx, js, streams.BucketPolicy, streams.PolicyObject(other, 0), b); err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	for _, run := range []string{testRun, other} {
		a, err := NewActor(js, ActorConfig{Run: run, Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		go a.Run(rctx)
		req := rolloutRequest(t)
		req.Run = run
		if _, err := streams.PublishRollout(ctx, js, req); err != nil {
			t.Fatal(err)
		}
	}
	for _, run := range []string{testRun, other} {
		for {
			var n int
			err := streams.Replay(ctx, js, streams.ReplayOptions{Run: run, Subject: "traj.onpolicy"}, func(streams.Message) error { n++; return nil })
			if err != nil {
				t.Fatal(err)
			}
			if n == 6 {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("run %s: %d of 6 trajectories", run, n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
