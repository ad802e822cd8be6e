package household

import (
	"context"
	"testing"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/rollout"
)

// TestRandomPolicyRarelySucceeds keeps exploration a real problem: on the
// default preset a uniformly random policy must succeed well under 1% of
// the time, while on the easy preset it does succeed now and then.
func TestRandomPolicyRarelySucceeds(t *testing.T) {
	episodes := 2000
	if testing.Short() {
		episodes = 500
	}
	tests := []struct {
		preset   string
		min, max float64
	}{
		{PresetEasy, 0.005, 0.10},
		{PresetALFWorld, 0, 0.01},
	}
	for _, tt := range tests {
		t.Run(tt.preset, func(t *testing.T) {
			env, _ := New(presets[tt.preset])
			tasks, err := env.Tasks(envs.SplitTrain, episodes, 11)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := rollout.Evaluate(context.Background(), env, tasks, envs.RandomAgent{}, rollout.EvalOptions{Seed: 11})
			if err != nil {
				t.Fatal(err)
			}
			if got := rep.Overall.SuccessRate; got < tt.min || got > tt.max {
				t.Errorf("random success %.4f over %d episodes, want within [%v, %v]", got, episodes, tt.min, tt.max)
			}
		})
	}
}
