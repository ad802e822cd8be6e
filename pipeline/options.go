package pipeline

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/learner"
	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/settings"
)

// Options are the settings of a run as a user writes them: the flags of
// `rspo run` and `rspo serve learner`, the keys of a --config file, the
// printed and saved configuration and the configurations of experiment
// suites. Each field declares its setting once, in its tags (package
// settings): the key (= the flag's name), default, each recipe's value,
// range, the stages that read it and its help. DefaultOptions fills in
// every default; a count is at least 1 — a zero is refused (Validate),
// never read as a default — but for the two counts whose default is
// derived from others when zero: explore-group (N/2, at least 2) and
// keep-versions (k+3), which Resolved fills in.
type Options struct {
	Run  string `setting:"run" derived:"env, preset, algo, mode and seed, so the same command resumes" group:"run" stages:"run,learner" help:"run name"`
	Env  string `setting:"env" default:"household" group:"run" stages:"run,learner" help:"environment: household|shop"`
	Seed int64  `setting:"seed" default:"1" group:"run" stages:"run,learner" help:"seed of the policy, task draws and sampling"`
	// Updates is how long the run trains: raising it on a finished run
	// continues it.
	Updates int `setting:"updates" default:"30" count:"true" group:"run" stages:"run,learner" help:"learner updates"`
	// Recipe names a set of defaults (see Recipes): "tilted", the one
	// where the dense reward pays, or "paper", the paper's. WithRecipe
	// applies it to the options the user did not give.
	Recipe     string            `setting:"recipe" default:"tilted" enum:"tilted|paper" group:"run" stages:"run,learner" help:"defaults to train with: tilted (a step-target PRM from recorded runs of an easier setting, a tilted explorer, the π_θ/π_old ratio, no credit to the buffer's loops: where the dense reward pays) or paper (the paper's RSPO)"`
	EnvOptions map[string]string `setting:"env-opt" alias:"env_options" default:"" group:"run" stages:"run,learner" help:"environment option KEY=VALUE (repeatable, or comma-separated), e.g. preset=hard"`
	Data       string            `setting:"data" default:"runs" group:"run" stages:"run" help:"data directory: embedded server store, buffer, report"`
	// InitPolicy is the policy the run starts from (Config.InitPolicy).
	InitPolicy string `setting:"init-policy" default:"" recipe:"tilted=source" group:"run" stages:"run,learner" help:"start π_θ and the reference policy from a policy snapshot FILE (e.g. from rspo sft), run:NAME (a finished run's final policy on the same store or server), source (the best final policy of the recipe's built-in source runs) or expert:K (SFT on K expert episodes); empty: a fresh policy"`

	Algo      string  `setting:"algo" default:"grpo" recipe:"tilted=gigpo" enum:"grpo|ppo|gigpo" group:"algorithm" stages:"run,learner" help:"base algorithm: grpo|ppo|gigpo"`
	RSPO      bool    `setting:"rspo" default:"true" group:"algorithm" stages:"run,learner" help:"RSPO on (explorer, swap, buffer); --rspo=false runs the plain base algorithm"`
	DenseOnly bool    `setting:"dense-only" alias:"dense_only" default:"false" group:"algorithm" stages:"run,learner" help:"train π_θ directly on PRM dense rewards (the reward-hacking baseline; implies --rspo=false)"`
	Tasks     int     `setting:"tasks" default:"16" count:"true" group:"algorithm" stages:"run,learner" help:"B: tasks per update"`
	GroupSize int     `setting:"group" alias:"group_size" default:"8" count:"true" group:"algorithm" stages:"run,learner" help:"N: rollouts per task (GRPO group size)"`
	LR        float64 `setting:"lr" default:"0.03" above:"0" group:"algorithm" stages:"run,learner" help:"learning rate (Adam)"`
	Epochs    int     `setting:"epochs" default:"1" count:"true" group:"algorithm" stages:"run,learner" help:"optimisation epochs per batch"`
	// Beta weighs the KL penalty; 0 turns it off.
	Beta  float64 `setting:"beta" default:"0.01" min:"0" group:"algorithm" stages:"run,learner" help:"KL weight β to the reference policy (0 turns KL off)"`
	EpsOn float64 `setting:"eps-on" alias:"eps_on" default:"0.2" above:"0" group:"algorithm" stages:"run,learner" help:"on-policy clip ε"`
	// Trainer is who applies the updates: "builtin" (the learner) or
	// "external" (a trainer on rspo.<run>.batch; an in-process run starts
	// the reference one). Not a defining setting: both train alike.
	Trainer string `setting:"trainer" default:"builtin" enum:"builtin|external" group:"algorithm" stages:"run,learner" help:"who applies the updates: builtin (the learner) or external (a trainer on rspo.<run>.batch, e.g. rspo serve trainer; rspo run starts one; grpo or gigpo)"`
	// MaxStaleness is how many policy versions an update's on-policy
	// rollouts may lag (learnersvc.Config.MaxStaleness): 0, the default,
	// is the synchronous loop; S ≥ 1 pipelines the actors' rollouts with
	// the learner's updates. A defining setting: it changes what is
	// learned (an older run's settings without it read as 0).
	MaxStaleness int `setting:"max-staleness" default:"0" min:"0" group:"algorithm" stages:"run,learner" help:"S: policy versions an update's on-policy rollouts may lag; 0 is the synchronous loop; S ≥ 1 asks for update u+S's rollouts before applying update u so the actors play while the learner trains (decoupled-PPO correction, older trajectories refused; changes what is learned; below keep-versions)"`

	Alpha  float64 `setting:"alpha" default:"0.125" min:"0" max:"1" group:"rspo" stages:"run,learner" help:"off-policy share α of each update's batch"`
	K      int     `setting:"k" default:"3" count:"true" group:"rspo" stages:"run,learner" help:"learner updates per cycle = explorer updates of π_B"`
	EpsOff float64 `setting:"eps-off" alias:"eps_off" default:"0.1" above:"0" group:"rspo" stages:"run,learner" help:"off-policy clip ε around π_old/π_B"`
	// OffRatio is the off-policy ratio (learner.OffRatio).
	OffRatio string `setting:"off-ratio" alias:"off_ratio" default:"behaviour" recipe:"tilted=old" enum:"behaviour|old" group:"rspo" stages:"run,learner" help:"off-policy ratio: behaviour (eq. 4: π_θ/π_B clipped around π_old/π_B) or old (π_θ/π_old: learn from buffer successes at full weight, biased)"`
	// OffCredit is which steps of a buffer trajectory get its advantage
	// (learner.OffCredit): "episode", the paper's, or "no-loops".
	OffCredit string `setting:"off-credit" default:"episode" recipe:"tilted=no-loops" enum:"episode|no-loops" group:"rspo" stages:"run,learner" help:"which steps of a buffer trajectory get its advantage: episode (every step, as the paper) or no-loops (no positive credit to detours that came back to a state they started from)"`
	// OffTarget is which on-policy groups buffer records join
	// (learnersvc.OffTarget).
	OffTarget    string `setting:"off-target" default:"all" enum:"all|failing" group:"rspo" stages:"run,learner" help:"which on-policy groups buffer records join: all (every task of the update, the paper's) or failing (only tasks whose on-policy rollouts all failed, α scaled by their share: RSPO's signal where the base algorithm has none, the base algorithm's update where it has one)"`
	KeepVersions int    `setting:"keep-versions" alias:"keep_versions" derived:"k+3" count:"true" group:"rspo" stages:"run,learner" help:"policy snapshots kept in the object store; version 0 always stays"`

	// ExploreTarget is which of a cycle's tasks the explorer explores
	// (learnersvc.ExploreTarget).
	ExploreTarget string `setting:"explore-target" default:"all" enum:"all|failing" group:"explorer" stages:"run,learner" help:"which of a cycle's tasks the explorer explores: all (the paper's) or failing (the task types that failed an on-policy group in the previous cycle, each task collected more so the cycle's explorer budget stays the same)"`

	// Explore are the explorer's settings, declared with the cycle plan
	// that carries them (schemas.ExploreSettings).
	Explore schemas.ExploreSettings `setting:",inline"`

	PRMFile string `setting:"prm" default:"" group:"prm" stages:"run,learner" help:"PRM snapshot file to start from (e.g. trained on other runs with rspo prm train)"`
	// PRMSources are recorded runs (on the run's server) a step-target PRM
	// is trained on before the run, instead of the recipe's built-in
	// source runs. Exclusive with PRMFile.
	PRMSources       []string `setting:"prm-source" default:"" group:"prm" stages:"run,learner" help:"recorded run to train the tilted recipe's PRM on, instead of its built-in source runs (repeatable)"`
	PRMRefresh       bool     `setting:"prm-refresh" alias:"prm_refresh" default:"false" group:"prm" stages:"run,learner" help:"retrain the PRM from the run's streams at every cycle end"`
	PRMRefreshExtra  []string `setting:"prm-refresh-extra-run" alias:"prm_refresh_extra_run" default:"" group:"prm" stages:"run,learner" help:"other recorded run mixed into every PRM refresh (repeatable; needs --prm-refresh)"`
	PRMRefreshWindow int      `setting:"prm-refresh-window" alias:"prm_refresh_window" default:"8192" count:"true" group:"prm" stages:"run,learner" help:"most recent own trajectories a PRM refresh trains on (needs --prm-refresh)"`
	// PRMRefreshEpochs is each refresh's epoch budget: a refresh continues
	// the current PRM for at most this many epochs (learnersvc.Config.
	// PRMRefreshEpochs). A defining setting; settings recorded before it
	// existed read as LegacyPRMRefreshEpochs, the refresh those runs had.
	PRMRefreshEpochs int    `setting:"prm-refresh-epochs" default:"10" count:"true" group:"prm" stages:"run,learner" help:"epoch budget of each PRM refresh: it continues the current PRM for at most this many epochs (early stopping on the held-out loss still applies); 500 is the trainer's full budget, the refresh of runs recorded before this setting (needs --prm-refresh)"`
	PRMWarmupTasks   int    `setting:"prm-warmup-tasks" alias:"prm_warmup_tasks" default:"64" count:"true" group:"prm" stages:"run,learner" help:"tasks of the PRM warm-up when no --prm is given"`
	PRMTarget        string `setting:"prm-target" alias:"prm_target" default:"sum" recipe:"tilted=step" enum:"sum|step" group:"prm" stages:"run,learner" help:"fit target of the run's own PRM (warm-up, refresh): sum (eq. 7) or step (an action value, for --explore-tilt)"`
	// PRMFeatures is the featurizer of the PRMs a run trains (from source
	// runs, warm-up, refresh): PRMFeaturesHash or PRMFeaturesContext.
	PRMFeatures string `setting:"prm-features" default:"hash" recipe:"tilted=context" enum:"hash|context" group:"prm" stages:"run,learner" help:"featurizer of the PRMs the run trains: hash (the step's words and their crossings) or context (also what the observation says about each action's object)"`

	EvalEvery    int      `setting:"eval-every" alias:"eval_every" default:"10" count:"true" group:"eval" stages:"run,learner" help:"evaluate every this many updates"`
	EvalEpisodes int      `setting:"eval-episodes" alias:"eval_episodes" default:"64" count:"true" group:"eval" stages:"run,learner" help:"episodes per eval split"`
	EvalGreedy   bool     `setting:"eval-greedy" alias:"eval_greedy" default:"false" group:"eval" stages:"run,learner" help:"evaluate with the most probable action instead of sampling"`
	EvalSplits   []string `setting:"eval-splits" alias:"eval_splits" derived:"every split but train" group:"eval" stages:"run,learner" help:"splits to evaluate (\"train\" means held-out train tasks)"`
	// EvalShards splits each evaluation into this many work items for the
	// run's actors (learnersvc.Config.EvalShards); 1 evaluates in the
	// learner. Not a defining setting: the figures do not depend on it.
	EvalShards int `setting:"eval-shards" default:"1" count:"true" group:"scale" stages:"run,learner" help:"split each evaluation of a split into this many work items, played by the run's actors (rspo serve actor); 1 evaluates in the learner; the figures do not depend on it; at most --eval-episodes"`
	Actors     int `setting:"actors" default:"1" count:"true" group:"scale" stages:"run" help:"actor services to start in this process (each already plays GOMAXPROCS episodes at once: on one machine more actors do not add speed; add actor processes on other machines with rspo serve actor)"`

	// Policy says what plays π_θ (PolicySettings.Config).
	Policy PolicySettings `setting:",inline"`
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

// DefaultPRMRefreshWindow is the declared default of prm-refresh-window.
var DefaultPRMRefreshWindow = DefaultOptions().PRMRefreshWindow

// DefaultPRMRefreshEpochs is the default of prm-refresh-epochs: a refresh
// continues the current PRM for at most 10 epochs, a small share of a
// run's time (the warm-up, which starts from nothing, keeps the trainer's
// budget).
var DefaultPRMRefreshEpochs = DefaultOptions().PRMRefreshEpochs

// LegacyPRMRefreshEpochs is the trainer's own epoch budget (500, with
// early stopping after 20 epochs without a held-out improvement): the
// refresh of runs recorded before prm-refresh-epochs existed, and what
// --prm-refresh-epochs 500 still selects.
const LegacyPRMRefreshEpochs = 500

// DefaultOptions are the defaults of `rspo run`: RSPO on household under
// the tilted recipe's name (whose base algorithm is GiGPO), every setting
// at its declared default (the recipe's own values are set by WithRecipe,
// on the settings the user did not give).
func DefaultOptions() Options {
	var o Options
	settings.Defaults(&o, "")
	return o
}

// OptionKeys lists the keys of Options, in declaration order.
func OptionKeys() []string { return settings.Keys(&Options{}) }

// Field returns a pointer to the option stored under key (or an older
// spelling of it), or nil if there is no such key.
func (o *Options) Field(key string) any {
	s, _, ok := settings.Lookup(o, key)
	if !ok {
		return nil
	}
	return s.Ptr(o)
}

// Validate reports every problem with the options, each naming its key:
// values their declarations refuse (counts below 1, numbers out of range,
// unknown names) and settings given without the one they need.
func (o Options) Validate() error {
	errs := []error{settings.Validate(&o)}
	if !o.PRMRefresh && o.PRMRefreshWindow != DefaultPRMRefreshWindow {
		errs = append(errs, &settings.ValueError{Key: "prm-refresh-window", Value: strconv.Itoa(o.PRMRefreshWindow), Want: "to be left alone without prm-refresh, which alone uses it"})
	}
	if !o.PRMRefresh && o.PRMRefreshEpochs != DefaultPRMRefreshEpochs {
		errs = append(errs, &settings.ValueError{Key: "prm-refresh-epochs", Value: strconv.Itoa(o.PRMRefreshEpochs), Want: "to be left alone without prm-refresh, which alone uses it"})
	}
	if o.EvalShards > o.EvalEpisodes && o.EvalEpisodes > 0 {
		errs = append(errs, &settings.ValueError{Key: "eval-shards", Value: strconv.Itoa(o.EvalShards),
			Want: fmt.Sprintf("at most %d: an evaluation has %d episodes (eval-episodes)", o.EvalEpisodes, o.EvalEpisodes)})
	}
	if o.Env != "" {
		if _, err := envs.New(o.Env, o.EnvOptions); err != nil {
			errs = append(errs, &settings.ValueError{Key: "env", Value: o.Env, Want: err.Error()})
		}
	}
	if _, err := o.Policy.Config(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Resolved returns o with the derived counts filled in.
func (o Options) Resolved() Options {
	if o.Explore.GroupSize == 0 {
		o.Explore.GroupSize = max(2, o.GroupSize/2)
	}
	if o.KeepVersions == 0 {
		o.KeepVersions = o.K + 3
	}
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
		mode = "rspo-" + string(o.Explore.Mode)
		if o.Explore.Tilt > 0 {
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
		Explore: o.Explore, ExploreCollectSet: true, PRMRefresh: o.PRMRefresh, PRMWarmupTasks: o.PRMWarmupTasks,
		PRMRefreshExtraRuns: o.PRMRefreshExtra,
		EvalEvery:           o.EvalEvery, EvalEpisodes: o.EvalEpisodes, EvalGreedy: o.EvalGreedy, EvalSplits: o.EvalSplits,
		EvalShards:   o.EvalShards,
		KeepVersions: o.KeepVersions, PRMTrain: prm.TrainConfig{Target: prm.Target(o.PRMTarget), Featurizer: feat},
		TrainerMode: learnersvc.TrainerMode(o.Trainer), MaxStaleness: o.MaxStaleness, OffTarget: learnersvc.OffTarget(o.OffTarget),
		ExploreTarget: learnersvc.ExploreTarget(o.ExploreTarget),
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
	pc, err := o.Policy.Config()
	if err != nil {
		return Config{}, err
	}
	cfg := Config{Learner: lc, Settings: o.Settings(), Actors: o.Actors, DataDir: o.Data, Options: &o, Policy: pc, InitPolicy: o.InitPolicy}
	return cfg, o.sourceConfig(&cfg)
}
