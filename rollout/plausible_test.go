package rollout_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/envs"
	_ "github.com/rspo-dev/rspo/envs/shop"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/swapper"
)

// played returns trajectories of the built-in policy in env: what genuine
// actors publish.
func played(t testing.TB, env envs.Env, n int) []*schemas.Trajectory {
	t.Helper()
	tasks, err := env.Tasks(envs.SplitTrain, n, 3)
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.New(policy.Config{Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	eps := make([]rollout.Episode, len(tasks))
	for i, task := range tasks {
		eps[i] = rollout.Episode{Task: task, Opts: policy.RolloutOptions{Seed: int64(i + 1), ID: "r.onpolicy.t." + string(rune('a'+i)),
			Run: "r", Source: schemas.SourceOnPolicy, Producer: "t"}}
	}
	trajs, err := rollout.All(context.Background(), env, rollout.PolicyPlayer{Policy: p}, eps, 2)
	if err != nil {
		t.Fatal(err)
	}
	return trajs
}

// Genuine trajectories of both environments pass, on-policy and swapped,
// readable or not.
func TestGenuineTrajectoriesArePlausible(t *testing.T) {
	for _, name := range []string{"household", "shop"} {
		env, err := envs.New(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range played(t, env, 6) {
			if err := rollout.CheckTrajectory(env, tr, true); err != nil {
				t.Errorf("%s on-policy: %v", name, err)
			}
			x := tr.Clone()
			x.Source = schemas.SourceExplore
			for i := range x.Steps {
				x.Steps[i].Reward = 0.3 // a dense label before the swap
			}
			if err := rollout.CheckTrajectory(env, x, false); err != nil {
				t.Errorf("%s explore: %v", name, err)
			}
			sw, err := swapper.Relabel(x)
			if err != nil {
				t.Fatal(err)
			}
			if err := rollout.CheckTrajectory(env, sw, true); err != nil {
				t.Errorf("%s swapped: %v", name, err)
			}
		}
	}
}

// Every claim no episode could make is refused, naming the field.
func TestImplausibleTrajectoriesAreRefused(t *testing.T) {
	env, err := envs.New("household", nil)
	if err != nil {
		t.Fatal(err)
	}
	base := played(t, env, 1)[0]
	last := len(base.Steps) - 1
	tests := []struct {
		name     string
		readable bool
		mutate   func(*schemas.Trajectory)
		field    string
	}{
		{"huge step reward", false, func(t *schemas.Trajectory) { t.Steps[0].Reward = 1e308 }, "steps[0].reward"},
		{"last step pays other than the outcome", false, func(t *schemas.Trajectory) { t.Steps[last].Reward = t.OutcomeReward + 0.5 }, "reward"},
		{"partial outcome in a two-valued environment", false, func(t *schemas.Trajectory) {
			t.OutcomeReward, t.Steps[last].Reward = 0.5, 0.5
		}, "outcome_reward"},
		{"success paid nothing", false, func(t *schemas.Trajectory) { t.Success, t.OutcomeReward, t.Steps[last].Reward = true, 0, 0 }, "outcome_reward"},
		{"failure paid the max", false, func(t *schemas.Trajectory) { t.Success, t.OutcomeReward, t.Steps[last].Reward = false, 1, 1 }, "outcome_reward"},
		{"absurd behaviour log-prob", false, func(t *schemas.Trajectory) { t.Steps[0].BehaviorLogProb = -1e308 }, "steps[0].behavior_log_prob"},
		{"behaviour log-prob just below the floor", false, func(t *schemas.Trajectory) { t.Steps[0].BehaviorLogProb = -100.5 }, "steps[0].behavior_log_prob"},
		{"absurd token log-prob", false, func(t *schemas.Trajectory) {
			t.Steps[0].TokenIDs, t.Steps[0].TokenLogProbs = []int32{1, 2}, []float32{-1, -1e30}
		}, "steps[0].token_log_probs[1]"},
		{"index -1 for an admissible action", false, func(t *schemas.Trajectory) { t.Steps[0].ActionIndex = -1 }, "steps[0].action_index"},
		{"index -1 for the built-in policy", true, func(t *schemas.Trajectory) {
			t.Steps[0].ActionIndex, t.Steps[0].Action = -1, "dance"
		}, "steps[0].action_index"},
		{"no admissible list for the built-in policy", true, func(t *schemas.Trajectory) {
			t.Steps[0].Admissible, t.Steps[0].ActionIndex = nil, -1
		}, "steps[0].admissible"},
		{"index past the list", false, func(t *schemas.Trajectory) { t.Steps[0].ActionIndex = int32(len(t.Steps[0].Admissible)) }, "steps[0].action_index"},
		{"index naming another action", false, func(t *schemas.Trajectory) { t.Steps[0].Action = "x" + t.Steps[0].Action }, "steps[0].action_index"},
		{"longer than the step limit", false, func(t *schemas.Trajectory) {
			for len(t.Steps) <= 60 {
				s := t.Steps[0]
				s.Reward = 0
				t.Steps = append([]schemas.Step{s}, t.Steps...)
			}
		}, "steps"},
		{"another environment", false, func(t *schemas.Trajectory) { t.Env = "shop" }, "env"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := base.Clone()
			tt.mutate(x)
			err := rollout.CheckTrajectory(env, x, tt.readable)
			var ie *rollout.ImplausibleError
			if !errors.As(err, &ie) || !errors.Is(err, rollout.ErrImplausible) {
				t.Fatalf("got %v, want an ImplausibleError", err)
			}
			if !strings.HasSuffix(ie.Field, tt.field) {
				t.Errorf("field %q, want %q (%v)", ie.Field, tt.field, err)
			}
		})
	}
}

// A step that records its tokens is as many choices: a 64-token answer
// may have a log-prob far below one choice's floor, each token not.
func TestTokenStepsScaleTheLogProbFloor(t *testing.T) {
	env, err := envs.New("household", nil)
	if err != nil {
		t.Fatal(err)
	}
	x := played(t, env, 1)[0].Clone()
	st := &x.Steps[0]
	st.TokenIDs, st.TokenLogProbs = make([]int32, 64), make([]float32, 64)
	for i := range st.TokenLogProbs {
		st.TokenLogProbs[i] = -3
	}
	st.BehaviorLogProb = -192
	if err := rollout.CheckTrajectory(env, x, false); err != nil {
		t.Errorf("64 tokens at -3 each: %v", err)
	}
	st.BehaviorLogProb = -6401
	if err := rollout.CheckTrajectory(env, x, false); err == nil {
		t.Error("a 64-token step below 64 choices' floor passed")
	}
}

// BenchmarkCheckTrajectory measures the guard's cost per household
// trajectory, to set beside its decode (schemas' BenchmarkDecode*).
func BenchmarkCheckTrajectory(b *testing.B) {
	env, err := envs.New("household", nil)
	if err != nil {
		b.Fatal(err)
	}
	trajs := played(b, env, 16)
	steps := 0
	for _, tr := range trajs {
		steps += len(tr.Steps)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := rollout.CheckTrajectory(env, trajs[i%len(trajs)], true); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(steps)/float64(len(trajs)), "steps/traj")
}
