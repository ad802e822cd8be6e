package shop

import (
	"context"
	"testing"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/rollout"
)

// TestRandomPolicyStaysLow measures the uniformly random policy over the
// admissible actions (thousands of episodes on each split) and requires
// its success rate to stay low: the task needs exploration.
func TestRandomPolicyStaysLow(t *testing.T) {
	tests := []struct {
		name       string
		preset     string
		maxSuccess float64
	}{
		{"standard", PresetStandard, 0.01},
		{"easy", PresetEasy, 0.05},
	}
	episodes := 5000
	if testing.Short() {
		episodes = 1000
	}
	for _, tt := range tests {
		env, err := New(Config{Preset: tt.preset})
		if err != nil {
			t.Fatal(err)
		}
		for _, split := range env.Splits() {
			t.Run(tt.name+"/"+split, func(t *testing.T) {
				tasks, err := env.Tasks(split, 0, 1)
				if err != nil {
					t.Fatal(err)
				}
				rep, err := rollout.Evaluate(context.Background(), env, tasks, envs.RandomAgent{}, rollout.EvalOptions{Episodes: episodes, Seed: 1})
				if err != nil {
					t.Fatal(err)
				}
				o := rep.Overall
				t.Logf("random %s %s: %d episodes, success %.4f, mean score %.4f, mean steps %.2f",
					tt.name, split, o.Episodes, o.SuccessRate, o.MeanScore, o.MeanSteps)
				for _, ty := range rep.Types {
					s := rep.ByType[ty]
					t.Logf("  %-11s %5d episodes, success %.4f, mean score %.4f", ty, s.Episodes, s.SuccessRate, s.MeanScore)
				}
				if o.SuccessRate > tt.maxSuccess || o.MeanScore > 0.3 {
					t.Errorf("random success %.4f, mean score %.4f; want at most %.2f and 0.3", o.SuccessRate, o.MeanScore, tt.maxSuccess)
				}
			})
		}
	}
}
