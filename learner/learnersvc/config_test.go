package learnersvc

import (
	"strings"
	"testing"

	_ "github.com/rspo-dev/rspo/envs/household"
	"github.com/rspo-dev/rspo/learner"
)

func TestConfigValidate(t *testing.T) {
	ok := Config{Run: "r1"}
	tests := []struct {
		name string
		mod  func(*Config)
		want string // "" means valid
	}{
		{name: "defaults", mod: func(*Config) {}},
		{name: "bad run name", mod: func(c *Config) { c.Run = "a.b" }, want: "run"},
		{name: "unknown env", mod: func(c *Config) { c.Env = "zoo" }, want: "unknown environment"},
		{name: "rspo with dense-only", mod: func(c *Config) { c.RSPO, c.DenseOnly = true, true }, want: "excludes RSPO"},
		{name: "alpha leaves no buffer record", mod: func(c *Config) { c.RSPO, c.Tasks, c.GroupSize = true, 1, 1 }, want: "no buffer record"},
		{name: "alpha leaves no on-policy task", mod: func(c *Config) { c.RSPO, c.Tasks, c.Trainer.Alpha = true, 1, 0.9 }, want: "no on-policy task"},
		{name: "unknown explorer", mod: func(c *Config) { c.Explore.Mode = "psychic" }, want: "explorer mode"},
		{name: "collect 0 without swap-all", mod: func(c *Config) { c.Explore.Collect, c.ExploreCollectSet = 0, true }, want: "explore collect"},
		{name: "collect 0 with swap-all", mod: func(c *Config) { c.Explore.Collect, c.ExploreCollectSet, c.Explore.SwapAll = 0, true, true }},
		{name: "unknown eval split", mod: func(c *Config) { c.EvalSplits = []string{"valid_seen"} }, want: "eval split"},
		{name: "held-out train eval", mod: func(c *Config) { c.EvalSplits = []string{"train"} }},
		{name: "bad trainer", mod: func(c *Config) { c.Trainer.Algo = "sarsa" }, want: "sarsa"},
		{name: "refresh extras without refresh", mod: func(c *Config) { c.PRMRefreshExtraRuns = []string{"easy1"} }, want: "only used with PRM refresh"},
		{name: "refresh with extras", mod: func(c *Config) { c.PRMRefresh, c.PRMRefreshExtraRuns = true, []string{"easy1"} }},
		{name: "bad extra run", mod: func(c *Config) { c.PRMRefresh, c.PRMRefreshExtraRuns = true, []string{"a.b"} }, want: "extra run"},
		{name: "refresh epochs without refresh", mod: func(c *Config) { c.PRMRefreshEpochs = 10 }, want: "only used with PRM refresh"},
		{name: "negative refresh epochs", mod: func(c *Config) { c.PRMRefresh, c.PRMRefreshEpochs = true, -1 }, want: "refresh epochs -1"},
		{name: "refresh with epochs", mod: func(c *Config) { c.PRMRefresh, c.PRMRefreshEpochs = true, 10 }},
		{name: "negative refresh window", mod: func(c *Config) { c.PRMRefresh, c.PRMRefreshWindow = true, -1 }, want: "refresh window"},
		{name: "tilt with noise", mod: func(c *Config) { c.RSPO, c.Explore.Tilt, c.Explore.PRMNoise = true, 3, 0.1 }, want: "explorer settings"},
		{name: "gate above 1", mod: func(c *Config) { c.Explore.GateAUC = 2 }, want: "plan.gate_auc"},
		{name: "external gigpo", mod: func(c *Config) { c.TrainerMode, c.Trainer.Algo = TrainerExternal, learner.GiGPO }},
		{name: "unknown trainer mode", mod: func(c *Config) { c.TrainerMode = "remote" }, want: `trainer "remote": want builtin or external`},
		{name: "external ppo", mod: func(c *Config) { c.TrainerMode, c.Trainer.Algo = TrainerExternal, learner.PPO }, want: "ppo's advantages need V_old"},
		{name: "pipelined", mod: func(c *Config) { c.MaxStaleness = 2 }},
		{name: "negative staleness", mod: func(c *Config) { c.MaxStaleness = -1 }, want: "max staleness -1"},
		{name: "staleness past the kept snapshots", mod: func(c *Config) { c.MaxStaleness, c.KeepVersions = 3, 3 }, want: "raise keep-versions"},
		{name: "pipelined external", mod: func(c *Config) { c.MaxStaleness, c.TrainerMode = 1, TrainerExternal }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.mod(&c)
			err := c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v, want a valid config", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want an error mentioning %q", err, tt.want)
			}
		})
	}
}

func TestBatchSplitFollowsAlpha(t *testing.T) {
	c := Config{Run: "r", RSPO: true, Tasks: 16, GroupSize: 8, Trainer: learner.Config{Alpha: 0.125}}.WithDefaults()
	if got, want := c.onTasks(), 14; got != want {
		t.Errorf("on-policy tasks: got %d, want %d ((1-α)·B)", got, want)
	}
	if got, want := c.offCount(), 16; got != want {
		t.Errorf("buffer records: got %d, want %d (α·B·N)", got, want)
	}
	c.RSPO = false
	if c.onTasks() != 16 || c.offCount() != 0 {
		t.Errorf("without RSPO: %d on-policy tasks, %d buffer records; want 16 and 0", c.onTasks(), c.offCount())
	}
}

func TestTrainerConfigDecouplesOnlyPipelinedRuns(t *testing.T) {
	c := Config{Run: "r"}
	if c.trainerConfig().Decoupled {
		t.Error("synchronous run: decoupled correction on, want off")
	}
	c.MaxStaleness = 1
	if !c.trainerConfig().Decoupled || c.Trainer.Decoupled {
		t.Errorf("pipelined run: trainer decoupled %v, settings decoupled %v; want the trainer's on, π_B's settings untouched",
			c.trainerConfig().Decoupled, c.Trainer.Decoupled)
	}
}
