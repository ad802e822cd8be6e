package household_test

import (
	"testing"

	"github.com/rspo-dev/rspo/envs/envtest"
	"github.com/rspo-dev/rspo/envs/household"
)

func TestConformance(t *testing.T) {
	for _, preset := range household.Presets() {
		t.Run(preset, func(t *testing.T) {
			cfg, err := household.Preset(preset)
			if err != nil {
				t.Fatal(err)
			}
			envtest.RunConfig(t, household.Factory, envtest.Config{
				Options:     map[string]string{household.OptPreset: preset},
				StepLimit:   cfg.MaxSteps,
				ExpertTasks: -1,
				Episodes:    12,
			})
		})
	}
}
