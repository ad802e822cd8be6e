package pipeline

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/rspo-dev/rspo/learner"
	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/schemas"
)

// Options are the settings of a run as a user writes them: the flags of
// `rspo run` and `rspo serve learner`, the keys of a --config file, and the
// configurations of experiment suites. Every key is the flag's name.
// DefaultOptions holds `rspo run`'s defaults, every one filled in; a zero
// count is refused (Validate), never read as a default. Two counts default
// to a value derived from others when zero: explore-group (N/2, at least
// 2) and keep-versions (k+3); Resolved fills them in.
type Options struct {
	Run        string            `json:"run"`
	Env        string            `json:"env"`
	EnvOptions map[string]string `json:"env-opt"`
	Algo       string            `json:"algo"`
	RSPO       bool              `json:"rspo"`
	DenseOnly  bool              `json:"dense-only"`
	Alpha      float64           `json:"alpha"`
	K          int               `json:"k"`
	Updates    int               `json:"updates"`
	Tasks      int               `json:"tasks"`
	GroupSize  int               `json:"group"`
	Seed       int64             `json:"seed"`
	LR         float64           `json:"lr"`
	Epochs     int               `json:"epochs"`
	// Beta weighs the KL penalty; 0 (or less) turns it off.
	Beta     float64 `json:"beta"`
	EpsOn    float64 `json:"eps-on"`
	EpsOff   float64 `json:"eps-off"`
	OffRatio string  `json:"off-ratio"`
	// OffCredit is which steps of a buffer trajectory get its advantage
	// (learner.OffCredit): "episode", the paper's, or "no-loops".
	OffCredit string `json:"off-credit"`
	// Trainer is who applies the updates: "builtin" (the learner) or
	// "external" (a trainer on rspo.<run>.batch; an in-process run starts
	// the reference one). Not a defining setting: both train alike.
	Trainer string `json:"trainer"`

	Explorer         string `json:"explorer"`
	SwapAll          bool   `json:"swap-all"`
	ExploreGroupSize int    `json:"explore-group"`
	ExploreCollect   int    `json:"explore-collect"`
	// ExploreShards splits each cycle's exploration into this many work
	// items for as many explorers (learnersvc.Config.ExploreShards).
	ExploreShards int    `json:"explore-shards"`
	PRMFile       string `json:"prm"`
	// PRMSources are recorded runs (on the run's server) a step-target PRM
	// is trained on before the run, instead of the recipe's built-in
	// source runs. Exclusive with PRMFile.
	PRMSources []string `json:"prm-source"`
	// Recipe names a set of defaults (see Recipes): "tilted", the one
	// where the dense reward pays, or "paper", the paper's. WithRecipe
	// applies it to the options the user did not give.
	Recipe           string   `json:"recipe"`
	PRMRefresh       bool     `json:"prm-refresh"`
	PRMRefreshExtra  []string `json:"prm-refresh-extra-run"`
	PRMRefreshWindow int      `json:"prm-refresh-window"`
	// PRMRefreshEpochs is each refresh's epoch budget: a refresh continues
	// the current PRM for at most this many epochs (learnersvc.Config.
	// PRMRefreshEpochs). A defining setting; settings recorded before it
	// existed read as LegacyPRMRefreshEpochs, the refresh those runs had.
	PRMRefreshEpochs int    `json:"prm-refresh-epochs"`
	PRMWarmupTasks   int    `json:"prm-warmup-tasks"`
	PRMTarget        string `json:"prm-target"`
	// PRMFeatures is the featurizer of the PRMs a run trains (from source
	// runs, warm-up, refresh): PRMFeaturesHash or PRMFeaturesContext.
	PRMFeatures string  `json:"prm-features"`
	PRMNoise    float64 `json:"prm-noise"`
	GateAUC     float64 `json:"gate-auc"`
	ExploreTilt float64 `json:"explore-tilt"`
	Verify      bool    `json:"verify"`

	EvalEvery    int      `json:"eval-every"`
	EvalEpisodes int      `json:"eval-episodes"`
	EvalGreedy   bool     `json:"eval-greedy"`
	EvalSplits   []string `json:"eval-splits"`
	// EvalShards splits each evaluation into this many work items for the
	// run's actors (learnersvc.Config.EvalShards); 1 evaluates in the
	// learner. Not a defining setting: the figures do not depend on it.
	EvalShards   int `json:"eval-shards"`
	Actors       int `json:"actors"`
	KeepVersions int `json:"keep-versions"`
	// MaxStaleness is how many policy versions an update's on-policy
	// rollouts may lag (learnersvc.Config.MaxStaleness): 0, the default,
	// is the synchronous loop; S ≥ 1 pipelines the actors' rollouts with
	// the learner's updates. A defining setting: it changes what is
	// learned (an older run's settings without it read as 0).
	MaxStaleness int `json:"max-staleness"`

	Data string `json:"data"`
}

// The values of prm-features.
const (
	// PRMFeaturesHash is the hashed projection of the step's words and
	// their crossings (prm.HashProjection).
	PRMFeaturesHash = "hash"
	// PRMFeaturesContext adds what the observation says about each
	// action's object (prm.HashProjectionConfig.ActionContext): the shop's
	// click[<id>] is otherwise an opaque id.
	PRMFeaturesContext = "context"
)

// prmFeaturizer is the featurizer prm-features names.
func (o Options) prmFeaturizer() (prm.Featurizer, error) {
	switch o.PRMFeatures {
	case PRMFeaturesHash:
		return prm.DefaultFeaturizer(), nil
	case PRMFeaturesContext:
		return prm.NewHashProjection(prm.HashProjectionConfig{ActionContext: true})
	}
	return nil, fmt.Errorf("pipeline: prm-features %q: want %s or %s", o.PRMFeatures, PRMFeaturesHash, PRMFeaturesContext)
}

// DefaultPRMRefreshWindow is the default of prm-refresh-window.
const DefaultPRMRefreshWindow = 8192

// DefaultPRMRefreshEpochs is the default of prm-refresh-epochs: a refresh
// continues the current PRM for at most 10 epochs, a small share of a
// run's time (the warm-up, which starts from nothing, keeps the trainer's
// budget).
const DefaultPRMRefreshEpochs = 10

// LegacyPRMRefreshEpochs is the trainer's own epoch budget (500, with
// early stopping after 20 epochs without a held-out improvement): the
// refresh of runs recorded before prm-refresh-epochs existed, and what
// --prm-refresh-epochs 500 still selects.
const LegacyPRMRefreshEpochs = 500

// DefaultOptions are the defaults of `rspo run`: RSPO+GRPO on household,
// with the learner's defaults written out.
func DefaultOptions() Options {
	return Options{Env: "household", Algo: "grpo", RSPO: true, Alpha: 0.125, K: 3, Updates: 30,
		Tasks: 16, GroupSize: 8, Seed: 1, LR: 0.03, Epochs: 1, Beta: 0.01, EpsOn: 0.2, EpsOff: 0.1,
		OffRatio: string(learner.OffRatioBehaviour), OffCredit: string(learner.OffCreditEpisode), Trainer: string(learnersvc.TrainerBuiltin), Explorer: string(schemas.ExplorerPRM), ExploreCollect: 1, ExploreShards: 1,
		PRMRefreshWindow: DefaultPRMRefreshWindow, PRMRefreshEpochs: DefaultPRMRefreshEpochs, PRMWarmupTasks: 64, PRMTarget: string(prm.TargetSum),
		PRMFeatures: PRMFeaturesHash, EvalEvery: 10, EvalEpisodes: 64, EvalShards: 1, Actors: 1, Data: "runs", Recipe: RecipeTilted}
}

// CountKeys are the keys whose value is a count: at least 1, never 0 for
// "the default".
var CountKeys = []string{"k", "updates", "tasks", "group", "epochs", "explore-group", "explore-shards", "prm-refresh-window", "prm-refresh-epochs",
	"prm-warmup-tasks", "eval-every", "eval-episodes", "eval-shards", "actors", "keep-versions"}

// derivedCounts are the counts whose zero Resolved replaces by a value
// derived from other options.
var derivedCounts = []string{"explore-group", "keep-versions"}

// OptionKeys lists the keys of Options, for error messages.
func OptionKeys() []string {
	t := reflect.TypeOf(Options{})
	keys := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		keys = append(keys, strings.Split(t.Field(i).Tag.Get("json"), ",")[0])
	}
	return keys
}

// Field returns a pointer to the option stored under key, or nil if
// there is no such key.
func (o *Options) Field(key string) any {
	v := reflect.ValueOf(o).Elem()
	for i := range v.NumField() {
		if v.Type().Field(i).Tag.Get("json") == key {
			return v.Field(i).Addr().Interface()
		}
	}
	return nil
}

// Validate reports every count below 1, by key. Counts whose default is
// derived may be 0 (Resolved fills them in) but not negative.
func (o Options) Validate() error {
	var errs []error
	for _, key := range CountKeys {
		n := *o.Field(key).(*int)
		if n < 1 && (n < 0 || !slices.Contains(derivedCounts, key)) {
			errs = append(errs, fmt.Errorf("pipeline: %s %d: give a count of at least 1", key, n))
		}
	}
	for key, v := range map[string]float64{"lr": o.LR, "eps-on": o.EpsOn, "eps-off": o.EpsOff} {
		if !(v > 0) {
			errs = append(errs, fmt.Errorf("pipeline: %s %v: give a positive number", key, v))
		}
	}
	if _, err := o.prmFeaturizer(); err != nil {
		errs = append(errs, err)
	}
	if !o.PRMRefresh && o.PRMRefreshWindow != DefaultPRMRefreshWindow {
		errs = append(errs, errors.New("pipeline: prm-refresh-window is only used with prm-refresh"))
	}
	if !o.PRMRefresh && o.PRMRefreshEpochs != DefaultPRMRefreshEpochs {
		errs = append(errs, errors.New("pipeline: prm-refresh-epochs is only used with prm-refresh"))
	}
	if o.EvalShards > o.EvalEpisodes && o.EvalEpisodes > 0 {
		errs = append(errs, fmt.Errorf("pipeline: eval-shards %d: an evaluation has %d episodes (eval-episodes), so at most %d shards",
			o.EvalShards, o.EvalEpisodes, o.EvalEpisodes))
	}
	return errors.Join(errs...)
}

// Resolved returns o with the derived counts filled in and a negative
// beta (an older spelling of "no KL") as 0.
func (o Options) Resolved() Options {
	if o.ExploreGroupSize == 0 {
		o.ExploreGroupSize = max(2, o.GroupSize/2)
	}
	if o.KeepVersions == 0 {
		o.KeepVersions = o.K + 3
	}
	o.Beta = max(o.Beta, 0)
	return o
}

// RunName is Run, or a name derived from the main settings of a run
// (environment and its preset, algorithm, mode, seed, max-staleness when
// not 0), so running the same settings again
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
	env := o.Env
	if p := o.EnvOptions["preset"]; p != "" && schemas.CheckRunName(env+"-"+p) == nil {
		env += "-" + p // runs of one command on two presets must not share a name
	}
	name := fmt.Sprintf("%s-%s-%s-s%d", env, o.Algo, mode, o.Seed)
	if o.MaxStaleness > 0 { // a pipelined run learns otherwise: not the synchronous run's name
		name += fmt.Sprintf("-stale%d", o.MaxStaleness)
	}
	return name
}

// Config maps the options to a pipeline configuration. It loads the PRM
// file, if any, and refuses settings the learner would silently read as a
// default.
func (o Options) Config() (Config, error) {
	if err := o.Validate(); err != nil {
		return Config{}, err
	}
	o = o.Resolved()
	if o.DenseOnly {
		o.RSPO = false
	}
	feat, err := o.prmFeaturizer()
	if err != nil {
		return Config{}, err
	}
	if o.RSPO && o.Alpha == 0 {
		return Config{}, fmt.Errorf("pipeline: alpha 0 gives RSPO no buffer data; use rspo=false for the base algorithm, or a small alpha such as 1/128")
	}
	lc := learnersvc.Config{
		Run: o.RunName(), Env: o.Env, EnvOptions: o.EnvOptions, Updates: o.Updates, Tasks: o.Tasks,
		GroupSize: o.GroupSize, Seed: o.Seed, RSPO: o.RSPO, DenseOnly: o.DenseOnly, K: o.K,
		ExploreGroupSize: o.ExploreGroupSize, ExploreCollect: o.ExploreCollect, ExploreCollectSet: true,
		ExploreShards: o.ExploreShards,
		SwapAll:       o.SwapAll, PRMRefresh: o.PRMRefresh, PRMWarmupTasks: o.PRMWarmupTasks,
		PRMRefreshExtraRuns: o.PRMRefreshExtra,
		EvalEvery:           o.EvalEvery, EvalEpisodes: o.EvalEpisodes, EvalGreedy: o.EvalGreedy, EvalSplits: o.EvalSplits,
		EvalShards:   o.EvalShards,
		KeepVersions: o.KeepVersions, PRMTrain: prm.TrainConfig{Target: prm.Target(o.PRMTarget), Featurizer: feat},
		Explorer: schemas.ExplorerMode(o.Explorer), ExploreTilt: o.ExploreTilt, PRMNoise: o.PRMNoise,
		GateAUC: o.GateAUC, Verify: o.Verify, TrainerMode: learnersvc.TrainerMode(o.Trainer), MaxStaleness: o.MaxStaleness,
		Trainer: learner.Config{Algo: learner.Algo(o.Algo), Alpha: o.Alpha, LR: o.LR, Epochs: o.Epochs,
			Beta: o.Beta, EpsOn: o.EpsOn, EpsOff: o.EpsOff, OffRatio: learner.OffRatio(o.OffRatio),
			OffCredit: learner.OffCredit(o.OffCredit), Seed: o.Seed},
	}
	if o.PRMRefresh {
		lc.PRMRefreshWindow, lc.PRMRefreshEpochs = o.PRMRefreshWindow, o.PRMRefreshEpochs
	}
	if o.Beta == 0 {
		lc.Trainer.Beta = learner.NoKL
	}
	if o.PRMFile != "" {
		m, err := prm.LoadFile(o.PRMFile)
		if err != nil {
			return Config{}, fmt.Errorf("pipeline: prm %s: %w", o.PRMFile, err)
		}
		lc.PRM = m
	}
	cfg := Config{Learner: lc, Settings: o.Settings(), Actors: o.Actors, DataDir: o.Data, Options: &o}
	return cfg, o.sourceConfig(&cfg)
}
