package experiments

import (
	"fmt"

	"github.com/rspo-dev/rspo/learner"
	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/pipeline"
	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/producers"
)

// RunConfig holds the settings of one training run under the same JSON keys
// as `rspo run --config`, so a suite's configuration can be replayed by
// hand with that command. Zero values mean the learner's defaults.
type RunConfig struct {
	Env        string            `json:"env,omitempty"`
	EnvOptions map[string]string `json:"env_options,omitempty"`
	Algo       string            `json:"algo,omitempty"`
	RSPO       bool              `json:"rspo"`
	DenseOnly  bool              `json:"dense_only,omitempty"`
	Alpha      float64           `json:"alpha"`
	K          int               `json:"k,omitempty"`
	Updates    int               `json:"updates,omitempty"`
	Tasks      int               `json:"tasks,omitempty"`
	GroupSize  int               `json:"group_size,omitempty"`
	LR         float64           `json:"lr,omitempty"`
	Epochs     int               `json:"epochs,omitempty"`
	Beta       float64           `json:"beta,omitempty"`
	EpsOn      float64           `json:"eps_on,omitempty"`
	EpsOff     float64           `json:"eps_off,omitempty"`

	Explorer         string  `json:"explorer,omitempty"`
	SwapAll          bool    `json:"swap_all,omitempty"`
	ExploreGroupSize int     `json:"explore_group_size,omitempty"`
	ExploreCollect   int     `json:"explore_collect"`
	PRMFile          string  `json:"prm,omitempty"`
	PRMRefresh       bool    `json:"prm_refresh,omitempty"`
	PRMWarmupTasks   int     `json:"prm_warmup_tasks,omitempty"`
	PRMNoise         float64 `json:"prm_noise,omitempty"`
	GateAUC          float64 `json:"gate_auc,omitempty"`

	EvalEvery    int  `json:"eval_every,omitempty"`
	EvalEpisodes int  `json:"eval_episodes,omitempty"`
	EvalGreedy   bool `json:"eval_greedy,omitempty"`
}

// DefaultRunConfig is the starting point every suite's base is laid over:
// the defaults of `rspo run` (RSPO+GRPO on household, α = 1/8, k = 3).
func DefaultRunConfig() RunConfig {
	return RunConfig{Env: "household", Algo: "grpo", RSPO: true, Alpha: 0.125, K: 3, Updates: 30,
		Tasks: 16, GroupSize: 8, Explorer: string(producers.ModePRM), ExploreCollect: 1}
}

// PipelineConfig maps the settings to a pipeline configuration for run
// name run with the given seed, storing everything under dataDir. It
// mirrors `rspo run`'s mapping of the same keys.
func (c RunConfig) PipelineConfig(run string, seed int64, dataDir string) (pipeline.Config, error) {
	if c.DenseOnly {
		c.RSPO = false
	}
	lc := learnersvc.Config{
		Run: run, Env: c.Env, EnvOptions: c.EnvOptions, Updates: c.Updates, Tasks: c.Tasks,
		GroupSize: c.GroupSize, Seed: seed, RSPO: c.RSPO, DenseOnly: c.DenseOnly, K: c.K,
		ExploreGroupSize: c.ExploreGroupSize, ExploreCollect: c.ExploreCollect, ExploreCollectSet: true,
		SwapAll: c.SwapAll, PRMRefresh: c.PRMRefresh, PRMWarmupTasks: c.PRMWarmupTasks,
		EvalEvery: c.EvalEvery, EvalEpisodes: c.EvalEpisodes, EvalGreedy: c.EvalGreedy,
		Trainer: learner.Config{Algo: learner.Algo(c.Algo), Alpha: c.Alpha, LR: c.LR, Epochs: c.Epochs,
			Beta: c.Beta, EpsOn: c.EpsOn, EpsOff: c.EpsOff, Seed: seed},
	}
	if c.Beta < 0 {
		lc.Trainer.Beta = learner.NoKL
	}
	if c.PRMFile != "" {
		m, err := prm.LoadFile(c.PRMFile)
		if err != nil {
			return pipeline.Config{}, fmt.Errorf("experiments: prm %s: %w", c.PRMFile, err)
		}
		lc.PRM = m
	}
	cfg := pipeline.Config{Learner: lc, ExplorerMode: producers.ExplorerMode(c.Explorer), PRMNoise: c.PRMNoise,
		GateAUC: c.GateAUC, DataDir: dataDir}
	return cfg, cfg.Validate()
}

// RolloutsPerUpdate is B·N, the on-policy rollouts of one learner update.
func (c RunConfig) RolloutsPerUpdate() int { return c.Tasks * c.GroupSize }
