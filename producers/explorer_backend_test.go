package producers

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/rspo-dev/rspo/llm"
	"github.com/rspo-dev/rspo/llm/llmserve"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// TestExplorerPlaysThroughBackend: with a Backend the explorer plays the
// tilted mode (SIR through the chat server) and the frozen control with
// the served version — no built-in snapshot of it is loaded — and refuses
// plans that train π_B.
func TestExplorerPlaysThroughBackend(t *testing.T) {
	ctx, js := setup(t)
	p, err := policy.New(policy.Config{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	srv := llmserve.New()
	srv.Serve("served-v9", p)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ep, err := llm.NewEndpoint(llm.EndpointConfig{URL: hs.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	var asked []int64
	backend, err := llm.NewBackend(ep, llm.ChatConfig{Candidates: 4}, func(_ context.Context, v int64) (string, error) {
		asked = append(asked, v)
		return "served-v9", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	x, err := NewExplorer(js, ExplorerConfig{Run: testRun, Logger: quietLogger(), Backend: backend, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		mode      schemas.ExplorerMode
		tilt      float64
		published int
		reject    bool
	}{
		{"tilted", schemas.ExplorerRandomPRM, 2, 2 * 2, false},
		{"frozen", schemas.ExplorerFrozen, 0, 2 * 2, false},
		{"trained", schemas.ExplorerRandomPRM, 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := schemas.CyclePlan{Env: "household", EnvOptions: easy, Tasks: trainTasks(t, 2), Updates: 2, Seed: 9, ExploreSettings: schemas.ExploreSettings{GroupSize: 3, Collect: 2, Mode: tc.mode, Tilt: tc.tilt}}
			raw, _ := json.Marshal(plan)
			e := schemas.Event{Type: schemas.EventCycleStarted, Run: testRun, Cycle: 4, PolicyVersion: 9, Config: raw}
			asked = nil
			res, err := x.Explore(ctx, e, plan)
			var rej *streams.RejectError
			if tc.reject {
				if !errors.As(err, &rej) {
					t.Fatalf("got %v, want a rejection", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Published != tc.published || len(asked) != 1 || asked[0] != 9 {
				t.Errorf("published %d (want %d), asked the backend for %v (want [9])", res.Published, tc.published, asked)
			}
		})
	}
	trajs := collect(t, ctx, js, "traj.explore")
	if len(trajs) != 2*2*2 {
		t.Fatalf("stored %d explorer trajectories, want 8", len(trajs))
	}
	for _, m := range trajs {
		tr := m.Trajectory
		if tr.PolicyVersion != 9 || tr.Source != schemas.SourceExplore {
			t.Errorf("trajectory %s: version %d, source %s", tr.ID, tr.PolicyVersion, tr.Source)
		}
		for i, s := range tr.Steps {
			if len(s.TokenIDs) != 1 || s.TokenIDs[0] != llmserve.TokenID(s.Action) || s.ActionIndex < 0 {
				t.Fatalf("trajectory %s step %d: tokens %v for %q", tr.ID, i, s.TokenIDs, s.Action)
			}
		}
	}
}
