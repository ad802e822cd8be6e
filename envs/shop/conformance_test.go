package shop

import (
	"testing"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/envs/envtest"
)

// factory builds the shop through the registry, as the rest of the system does.
func factory(opts map[string]string) (envs.Env, error) { return envs.New(Name, opts) }

func TestConformance(t *testing.T) {
	envtest.RunConfig(t, factory, envtest.Config{StepLimit: 15})
}

func TestConformanceEasy(t *testing.T) {
	envtest.RunConfig(t, factory, envtest.Config{
		Options:   map[string]string{"preset": PresetEasy},
		StepLimit: 20,
	})
}

func TestConformanceShortLimit(t *testing.T) {
	envtest.RunConfig(t, factory, envtest.Config{
		Options:   map[string]string{"max_steps": "9", "catalogue_size": "1000"},
		StepLimit: 9,
		Seed:      7,
	})
}

// TestConformanceSuccessReward: the environment contract holds under the
// success reward — the last step pays the outcome, a success pays, a
// replayed episode pays what the original did. That the outcome is the
// success is TestSuccessRewardPaysOnlyAFullMatch's.
func TestConformanceSuccessReward(t *testing.T) {
	envtest.RunConfig(t, factory, envtest.Config{
		Options:   map[string]string{"reward": RewardSuccess},
		StepLimit: 15,
		Seed:      3,
	})
}
