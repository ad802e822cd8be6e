// Package envtest is the conformance suite every environment runs. It checks
// the contract of envs.Env and envs.Episode that the rest of the system
// relies on: determinism, honest admissible lists, wasted inadmissible steps,
// step limits, ErrEpisodeDone, state keys, outcome range (and the declared
// envs.Bounds of an environment that declares them), solvability by the
// expert (when the environment ships a Planner), and robustness against
// arbitrary action strings.
//
// Use it from the environment's own tests:
//
//	func TestConformance(t *testing.T) {
//		envtest.Run(t, myenv.New)
//	}
//
// Each property is also available as a plain function returning an error
// (see Checks), so the suite can be tested against deliberately broken
// environments.
package envtest

import (
	"testing"

	"github.com/rspo-dev/rspo/envs"
)

// Config tunes the suite. The zero value is a sensible default.
type Config struct {
	// Options are passed to the factory; nil asks for the default
	// configuration.
	Options map[string]string
	// Seed seeds task generation and random play. Default 1.
	Seed int64
	// Episodes is the number of random-play episodes per property. Default 8.
	Episodes int
	// ExpertTasks is how many tasks of each split the expert must solve.
	// Default 25; negative means every task of the fixed splits (and 25
	// train tasks).
	ExpertTasks int
	// StepLimit, when positive, is the exact number of steps after which an
	// episode of the configured environment must end if the task is not
	// solved. When zero the suite only requires that episodes end within
	// MaxEpisodeSteps.
	StepLimit int
	// MaxEpisodeSteps bounds every episode when StepLimit is zero.
	// Default 10,000.
	MaxEpisodeSteps int
}

// withDefaults returns c with every zero field filled.
func (c Config) withDefaults() Config {
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Episodes <= 0 {
		c.Episodes = 8
	}
	if c.ExpertTasks == 0 {
		c.ExpertTasks = 25
	}
	if c.MaxEpisodeSteps <= 0 {
		c.MaxEpisodeSteps = 10_000
	}
	if c.StepLimit > 0 {
		c.MaxEpisodeSteps = c.StepLimit
	}
	return c
}

// Check is one property of the contract. It returns nil when env satisfies
// it and an error describing the first violation otherwise.
type Check struct {
	// Name names the subtest.
	Name string
	// Fn verifies the property.
	Fn func(env envs.Env, cfg Config) error
}

// Checks lists every property the suite verifies, in the order Run runs them.
func Checks() []Check {
	return []Check{
		{"Metadata", checkMetadata},
		{"Tasks", checkTasks},
		{"Reset", checkReset},
		{"Determinism", checkDeterminism},
		{"AdmissibleActions", checkAdmissible},
		{"InadmissibleWastesStep", checkInadmissible},
		{"StepLimit", checkStepLimit},
		{"EpisodeDone", checkEpisodeDone},
		{"Rewards", checkRewards},
		{"StateKeys", checkStateKeys},
		{"Expert", checkExpert},
		{"RandomStrings", checkRandomStrings},
		{"ConcurrentEpisodes", checkConcurrent},
	}
}

// Run runs the whole suite with the default Config.
func Run(t *testing.T, factory envs.Factory) {
	t.Helper()
	RunConfig(t, factory, Config{})
}

// RunConfig runs the whole suite with cfg, one subtest per Check.
func RunConfig(t *testing.T, factory envs.Factory, cfg Config) {
	t.Helper()
	cfg = cfg.withDefaults()
	env, err := factory(cfg.Options)
	if err != nil {
		t.Fatalf("factory(%v): %v", cfg.Options, err)
	}
	for _, c := range Checks() {
		t.Run(c.Name, func(t *testing.T) {
			if err := c.Fn(env, cfg); err != nil {
				t.Error(err)
			}
		})
	}
}
