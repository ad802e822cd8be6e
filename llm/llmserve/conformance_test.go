package llmserve_test

import (
	"context"
	"math"
	"net/http/httptest"
	"testing"

	"github.com/rspo-dev/rspo/envs"
	_ "github.com/rspo-dev/rspo/envs/household"
	"github.com/rspo-dev/rspo/llm"
	"github.com/rspo-dev/rspo/llm/llmserve"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
)

// fixture is a household easy environment, a few tasks, a policy and a
// server serving it as "pi".
type fixture struct {
	env   envs.Env
	tasks []envs.Task
	p     *policy.Policy
	srv   *httptest.Server
	ep    *llm.Endpoint
}

func newFixture(t testing.TB, tasks int) *fixture {
	t.Helper()
	env, err := envs.New("household", map[string]string{"preset": "easy"})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := env.Tasks(envs.SplitTrain, tasks, 5)
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.New(policy.Config{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	p.SetVersion(7)
	s := llmserve.New()
	s.Serve("pi", p)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	ep, err := llm.NewEndpoint(llm.EndpointConfig{URL: srv.URL + "/v1", APIKey: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{env: env, tasks: ts, p: p, srv: srv, ep: ep}
}

func (f *fixture) episodes(opts policy.RolloutOptions) []rollout.Episode {
	var eps []rollout.Episode
	for i, task := range f.tasks {
		for j := range 3 {
			o := opts
			o.Seed = rollout.EpisodeSeed(11, task.ID, i, j)
			o.Run, o.Producer, o.GroupID, o.Seq = "conf", "actor-1", task.ID, uint64(10*i+j)
			eps = append(eps, rollout.Episode{Task: task, Opts: o})
		}
	}
	return eps
}

// TestConformance: llm.Player through llmserve serving p plays exactly the
// trajectories rollout.PolicyPlayer{p} plays — same actions, same seeds,
// behaviour log-probs equal to 1e-9 — for every token-id mode, sampled and
// greedy, at the policy's temperature and another.
func TestConformance(t *testing.T) {
	f := newFixture(t, 4)
	for _, tc := range []struct {
		name string
		mode llm.TokenIDMode
		opts policy.RolloutOptions
	}{
		{"sampled/token-id-strings", llm.TokenIDStrings, policy.RolloutOptions{}},
		{"sampled/token-ids-field", llm.TokenIDField, policy.RolloutOptions{}},
		{"sampled/none", llm.TokenIDNone, policy.RolloutOptions{}},
		{"temperature", llm.TokenIDStrings, policy.RolloutOptions{Temperature: 2.5}},
		{"greedy", llm.TokenIDStrings, policy.RolloutOptions{Greedy: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl, err := llm.NewPlayer(f.ep, llm.ChatConfig{TokenIDs: tc.mode}, "pi", f.p.Version())
			if err != nil {
				t.Fatal(err)
			}
			eps := f.episodes(tc.opts)
			want, err := rollout.All(context.Background(), f.env, rollout.PolicyPlayer{Policy: f.p}, eps, 2)
			if err != nil {
				t.Fatal(err)
			}
			got, err := rollout.All(context.Background(), f.env, pl, eps, 2)
			if err != nil {
				t.Fatal(err)
			}
			for k := range want {
				sameTrajectory(t, got[k], want[k], tc.mode)
			}
		})
	}
}

func sameTrajectory(t *testing.T, got, want *schemas.Trajectory, mode llm.TokenIDMode) {
	t.Helper()
	if err := got.Validate(); err != nil {
		t.Fatalf("trajectory %s does not validate: %v", got.ID, err)
	}
	g, w := *got, *want
	g.Steps, w.Steps, g.CreatedAt = nil, nil, w.CreatedAt
	if !sameHeader(g, w) {
		t.Fatalf("header: got %+v, want %+v", g, w)
	}
	if len(got.Steps) != len(want.Steps) {
		t.Fatalf("%s: %d steps, want %d", got.ID, len(got.Steps), len(want.Steps))
	}
	for i := range want.Steps {
		gs, ws := got.Steps[i], want.Steps[i]
		if gs.Action != ws.Action || gs.ActionIndex != ws.ActionIndex || gs.StateKey != ws.StateKey || gs.Reward != ws.Reward {
			t.Fatalf("%s step %d: got %q (%d), want %q (%d)", got.ID, i, gs.Action, gs.ActionIndex, ws.Action, ws.ActionIndex)
		}
		if d := math.Abs(gs.BehaviorLogProb - ws.BehaviorLogProb); d > 1e-9 {
			t.Fatalf("%s step %d: behaviour log-prob %v, want %v", got.ID, i, gs.BehaviorLogProb, ws.BehaviorLogProb)
		}
		wantTokens := 1
		if mode == llm.TokenIDNone {
			wantTokens = 0
		}
		if len(gs.TokenIDs) != wantTokens || len(gs.TokenLogProbs) != wantTokens {
			t.Fatalf("%s step %d: %d token ids and %d token log-probs, want %d", got.ID, i, len(gs.TokenIDs), len(gs.TokenLogProbs), wantTokens)
		}
		if wantTokens == 1 && (gs.TokenIDs[0] != llmserve.TokenID(gs.Action) ||
			math.Abs(float64(gs.TokenLogProbs[0])-ws.BehaviorLogProb) > 1e-6) {
			t.Fatalf("%s step %d: token %d (%v), want %d (%v)", got.ID, i, gs.TokenIDs[0], gs.TokenLogProbs[0],
				llmserve.TokenID(gs.Action), ws.BehaviorLogProb)
		}
	}
}

func sameHeader(a, b schemas.Trajectory) bool {
	return a.ID == b.ID && a.Run == b.Run && a.Cycle == b.Cycle && a.Source == b.Source && a.PolicyVersion == b.PolicyVersion &&
		a.Producer == b.Producer && a.Seq == b.Seq && a.Env == b.Env && a.TaskID == b.TaskID && a.TaskType == b.TaskType &&
		a.TaskSeed == b.TaskSeed && a.Split == b.Split && a.Instruction == b.Instruction && a.GroupID == b.GroupID &&
		a.OutcomeReward == b.OutcomeReward && a.Success == b.Success
}

// TestAgentConformance: evaluating with llm.Agent through llmserve gives
// the built-in agent's report when both act greedily, for any Parallel
// (the agent forks); sampling, it plays the same number of episodes.
func TestAgentConformance(t *testing.T) {
	f := newFixture(t, 6)
	ctx := context.Background()
	want, err := rollout.Evaluate(ctx, f.env, f.tasks, policy.NewAgent(f.p, true), rollout.EvalOptions{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	a, err := llm.NewAgent(ctx, f.ep, llm.ChatConfig{}, "pi", true)
	if err != nil {
		t.Fatal(err)
	}
	for _, parallel := range []int{1, 3} {
		got, err := rollout.Evaluate(ctx, f.env, f.tasks, a, rollout.EvalOptions{Seed: 3, Parallel: parallel})
		if err != nil {
			t.Fatal(err)
		}
		if got.Overall != want.Overall {
			t.Errorf("parallel %d: got %+v, want %+v", parallel, got.Overall, want.Overall)
		}
	}
	sampled, err := llm.NewAgent(ctx, f.ep, llm.ChatConfig{}, "pi", false)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := rollout.Evaluate(ctx, f.env, f.tasks, sampled, rollout.EvalOptions{Episodes: 12, Seed: 3, Parallel: 2})
	if err != nil || rep.Overall.Episodes != 12 {
		t.Errorf("sampled: %+v, %v", rep.Overall, err)
	}
}
