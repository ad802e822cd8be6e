package envtest

import (
	"testing"

	"github.com/rspo-dev/rspo/envs"
)

func toyFactory(bug string) envs.Factory {
	return func(map[string]string) (envs.Env, error) { return &toy{bug: bug}, nil }
}

func TestRunOnCorrectEnvironment(t *testing.T) {
	RunConfig(t, toyFactory(""), Config{StepLimit: toyLimit})
}

func TestChecksCatchBugs(t *testing.T) {
	tests := []struct {
		name  string
		bug   string
		check string
	}{
		{"nondeterministic reset", "nondeterministic", "Determinism"},
		{"constant state key", "key", "StateKeys"},
		{"duplicate admissible action", "duplicate", "AdmissibleActions"},
		{"admissible action answered Nothing happens", "nothing", "AdmissibleActions"},
		{"inadmissible action not counted", "nowaste", "InadmissibleWastesStep"},
		{"inadmissible action changes state", "wastechanges", "InadmissibleWastesStep"},
		{"no step limit", "nolimit", "StepLimit"},
		{"stepping after done", "afterdone", "EpisodeDone"},
		{"expert cannot solve", "expert", "Expert"},
		{"panic on empty action", "panic", "RandomStrings"},
		{"failures outside the declared score range", "bounds", "Rewards"},
	}
	cfg := Config{StepLimit: toyLimit, MaxEpisodeSteps: 200}.withDefaults()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := &toy{bug: tt.bug}
			for _, c := range Checks() {
				if c.Name != tt.check {
					continue
				}
				if err := c.Fn(env, cfg); err == nil {
					t.Fatalf("check %s passed on an environment with bug %q, want an error", c.Name, tt.bug)
				} else {
					t.Logf("caught: %v", err)
				}
				return
			}
			t.Fatalf("no check named %q", tt.check)
		})
	}
}
