package pipeline

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/rspo-dev/rspo/learner"
	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/schemas"
)

// Options are the settings of a run as a user writes them: the flags of
// `rspo run` and `rspo serve learner`, the keys of a --config file, and the
// configurations of experiment suites. Zero values mean the learner's
// defaults; DefaultOptions holds `rspo run`'s.
type Options struct {
	Run        string            `json:"run"`
	Env        string            `json:"env"`
	EnvOptions map[string]string `json:"env_options"`
	Algo       string            `json:"algo"`
	RSPO       bool              `json:"rspo"`
	DenseOnly  bool              `json:"dense_only"`
	Alpha      float64           `json:"alpha"`
	K          int               `json:"k"`
	Updates    int               `json:"updates"`
	Tasks      int               `json:"tasks"`
	GroupSize  int               `json:"group_size"`
	Seed       int64             `json:"seed"`
	LR         float64           `json:"lr"`
	Epochs     int               `json:"epochs"`
	Beta       float64           `json:"beta"`
	EpsOn      float64           `json:"eps_on"`
	EpsOff     float64           `json:"eps_off"`
	OffRatio   string            `json:"off_ratio"`

	Explorer         string   `json:"explorer"`
	SwapAll          bool     `json:"swap_all"`
	ExploreGroupSize int      `json:"explore_group_size"`
	ExploreCollect   int      `json:"explore_collect"`
	PRMFile          string   `json:"prm"`
	PRMRefresh       bool     `json:"prm_refresh"`
	PRMRefreshExtra  []string `json:"prm_refresh_extra_run"`
	PRMRefreshWindow int      `json:"prm_refresh_window"`
	PRMWarmupTasks   int      `json:"prm_warmup_tasks"`
	PRMTarget        string   `json:"prm_target"`
	PRMNoise         float64  `json:"prm_noise"`
	GateAUC          float64  `json:"gate_auc"`
	ExploreTilt      float64  `json:"explore_tilt"`
	Verify           bool     `json:"verify"`

	EvalEvery    int      `json:"eval_every"`
	EvalEpisodes int      `json:"eval_episodes"`
	EvalGreedy   bool     `json:"eval_greedy"`
	EvalSplits   []string `json:"eval_splits"`
	Actors       int      `json:"actors"`
	KeepVersions int      `json:"keep_versions"`

	Data string `json:"data"`
}

// DefaultOptions are the defaults of `rspo run`: RSPO+GRPO on household.
func DefaultOptions() Options {
	return Options{Env: "household", Algo: "grpo", RSPO: true, Alpha: 0.125, K: 3, Updates: 30,
		Tasks: 16, GroupSize: 8, Seed: 1, Explorer: string(schemas.ExplorerPRM), ExploreCollect: 1, Actors: 1, Data: "runs"}
}

// OptionKeys lists the JSON keys of Options, for error messages.
func OptionKeys() []string {
	t := reflect.TypeOf(Options{})
	keys := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		keys = append(keys, strings.Split(t.Field(i).Tag.Get("json"), ",")[0])
	}
	return keys
}

// RunName is Run, or a name derived from the main settings of a run
// (environment, algorithm, mode, seed), so running the same settings again
// resumes the run. Settings the name leaves out are still checked on
// resume (see CheckSettings): give runs that differ only in them a name.
func (o Options) RunName() string {
	if o.Run != "" {
		return o.Run
	}
	mode := "base"
	switch {
	case o.DenseOnly:
		mode = "dense"
	case o.RSPO:
		mode = "rspo-" + o.Explorer
		if o.ExploreTilt > 0 {
			mode += "-tilt"
		}
	}
	return fmt.Sprintf("%s-%s-%s-s%d", o.Env, o.Algo, mode, o.Seed)
}

// Config maps the options to a pipeline configuration. It loads the PRM
// file, if any, and refuses settings the learner would silently read as a
// default.
func (o Options) Config() (Config, error) {
	if o.DenseOnly {
		o.RSPO = false
	}
	if o.RSPO && o.Alpha == 0 {
		return Config{}, fmt.Errorf("pipeline: alpha 0 gives RSPO no buffer data; use rspo=false for the base algorithm, or a small alpha such as 1/128")
	}
	lc := learnersvc.Config{
		Run: o.RunName(), Env: o.Env, EnvOptions: o.EnvOptions, Updates: o.Updates, Tasks: o.Tasks,
		GroupSize: o.GroupSize, Seed: o.Seed, RSPO: o.RSPO, DenseOnly: o.DenseOnly, K: o.K,
		ExploreGroupSize: o.ExploreGroupSize, ExploreCollect: o.ExploreCollect, ExploreCollectSet: true,
		SwapAll: o.SwapAll, PRMRefresh: o.PRMRefresh, PRMWarmupTasks: o.PRMWarmupTasks,
		PRMRefreshExtraRuns: o.PRMRefreshExtra, PRMRefreshWindow: o.PRMRefreshWindow,
		EvalEvery: o.EvalEvery, EvalEpisodes: o.EvalEpisodes, EvalGreedy: o.EvalGreedy, EvalSplits: o.EvalSplits,
		KeepVersions: o.KeepVersions, PRMTrain: prm.TrainConfig{Target: prm.Target(o.PRMTarget)},
		Explorer: schemas.ExplorerMode(o.Explorer), ExploreTilt: o.ExploreTilt, PRMNoise: o.PRMNoise,
		GateAUC: o.GateAUC, Verify: o.Verify,
		Trainer: learner.Config{Algo: learner.Algo(o.Algo), Alpha: o.Alpha, LR: o.LR, Epochs: o.Epochs,
			Beta: o.Beta, EpsOn: o.EpsOn, EpsOff: o.EpsOff, OffRatio: learner.OffRatio(o.OffRatio), Seed: o.Seed},
	}
	if o.Beta < 0 {
		lc.Trainer.Beta = learner.NoKL
	}
	if o.PRMFile != "" {
		m, err := prm.LoadFile(o.PRMFile)
		if err != nil {
			return Config{}, fmt.Errorf("pipeline: prm %s: %w", o.PRMFile, err)
		}
		lc.PRM = m
	}
	return Config{Learner: lc, Settings: o.Settings(), Actors: o.Actors, DataDir: o.Data}, nil
}
