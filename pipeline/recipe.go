package pipeline

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/settings"
	"github.com/rspo-dev/rspo/streams"
)

// The recipes: named sets of defaults.
const (
	// RecipeTilted is the configuration where the dense reward pays (see
	// docs/algorithm.md, "Recipes"): a step-target PRM trained on recorded
	// runs of an easier setting (envs.Curriculum), an explorer that acts
	// with π_θ·exp(λ·r̂) instead of training π_B, the π_θ/π_old off-policy
	// ratio, and no positive credit to the loops of buffer trajectories;
	// and π_θ starts from the best final policy of those runs
	// (InitPolicySource), the knowledge they hold beside their PRM.
	// Without --prm or --prm-source, its PRM comes from built-in source
	// runs (SourceRuns).
	RecipeTilted = "tilted"
	// RecipePaper is RSPO as the paper has it: a PRM warmed up on the run's
	// own rollouts, an explorer trained on it, eq. 4's ratio.
	RecipePaper = "paper"
)

// Recipes lists the recipe names, the default first: those the recipe
// setting's declaration allows.
func Recipes() []string {
	s, _, _ := settings.Lookup(&Options{}, "recipe")
	return s.Enum
}

// WithRecipe returns o with its recipe's values (declared on each
// setting, see Options) set for every key that given reports false for
// (rspo run passes the flags and config keys the user gave). An empty
// Recipe is RecipePaper.
func (o Options) WithRecipe(given func(key string) bool) (Options, error) {
	if o.Recipe == "" {
		o.Recipe = RecipePaper
	}
	if !slices.Contains(Recipes(), o.Recipe) {
		return o, fmt.Errorf("pipeline: recipe %q: want one of %v", o.Recipe, Recipes())
	}
	settings.ApplyRecipe(&o, o.Recipe, given)
	if !given("init-policy") && o.InitPolicy == InitPolicySource && (o.PRMFile != "" || len(o.PRMSources) > 0) {
		o.InitPolicy = "" // a PRM named by hand: the built-in source runs are not this run's knowledge
	}
	return o, nil
}

// SourceSeeds are the seeds of the built-in PRM source runs.
var SourceSeeds = []int64{101, 102}

// SourceStageSeed is the seed of the second stage's source run
// (envs.StagedCurriculum).
const SourceStageSeed = 103

// SourceRuns returns the built-in PRM source runs of o: the base algorithm
// (no RSPO) in the easier setting of o's environment (envs.Curriculum: for
// the household the easy preset's homes with o's train task types), one
// run per SourceSeeds seed, the environment's SourceUpdates, rspo run's other
// defaults; and, for an environment with a second stage
// (envs.StagedCurriculum, the household), the tilted recipe in the same
// setting with those runs as its PRM sources (seed SourceStageSeed), which
// runs after them. Their names depend only on the environment, the easier
// setting, the algorithm and the seed, so every run that needs them reuses
// the same recorded runs.
func (o Options) SourceRuns() ([]Options, error) {
	env, err := envs.New(o.Env, o.EnvOptions)
	if err != nil {
		return nil, err
	}
	cur, ok := env.(envs.Curriculum)
	if !ok {
		return nil, fmt.Errorf("pipeline: environment %s has no easier setting for the built-in PRM source runs (envs.Curriculum): give --prm FILE or --prm-source RUN, or train with --recipe paper", o.Env)
	}
	envOpts, updates := cur.SourceOptions(), cur.SourceUpdates()
	if updates <= 0 {
		return nil, fmt.Errorf("pipeline: environment %s asks for source runs of %d updates: want at least 1", o.Env, updates)
	}
	var out []Options
	var first []string
	for _, seed := range SourceSeeds {
		s := DefaultOptions()
		s.Recipe, s.RSPO, s.Env, s.Algo, s.Seed, s.Data, s.Updates = RecipePaper, false, o.Env, o.Algo, seed, o.Data, updates
		s.InitPolicy = "" // source runs start afresh: they are where starts come from
		s.EnvOptions = maps.Clone(envOpts)
		s.Run = fmt.Sprintf("prm-source-%s-%s-%s-u%d-s%d", o.Env, sourceSetting(envOpts), o.Algo, updates, seed)
		out = append(out, s)
		first = append(first, s.Run)
	}
	if st, ok := env.(envs.StagedCurriculum); ok && st.SourceStages() > 1 {
		s, err := DefaultOptions().WithRecipe(func(string) bool { return false })
		if err != nil {
			return nil, err
		}
		s.Env, s.Algo, s.Seed, s.Data, s.Updates = o.Env, o.Algo, SourceStageSeed, o.Data, updates
		s.InitPolicy = ""
		s.EnvOptions, s.PRMSources = maps.Clone(envOpts), first
		s.Run = fmt.Sprintf("prm-source-%s-%s-%s-tilted-u%d-s%d", o.Env, sourceSetting(envOpts), o.Algo, updates, SourceStageSeed)
		out = append(out, s)
	}
	return out, nil
}

// sourceSetting names the easier setting in a source run's name: its
// preset and a short hash of all its options, so source runs of different
// settings (other task types, another catalogue) never share a name.
func sourceSetting(opts map[string]string) string {
	h := fnv.New32a()
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		fmt.Fprintf(h, "%s=%s\n", k, opts[k])
	}
	preset := opts["preset"]
	if preset == "" {
		preset = "default"
	}
	return fmt.Sprintf("%s-%08x", preset, h.Sum32())
}

// needsSourcePRM says whether a run with these options trains its PRM on
// source runs: a tilted recipe (or given sources), RSPO with the PRM
// explorer, and no PRM file.
func (o Options) needsSourcePRM() bool {
	return o.PRMFile == "" && (len(o.PRMSources) > 0 || o.Recipe == RecipeTilted) &&
		o.RSPO && !o.DenseOnly && o.Explore.Mode == schemas.ExplorerPRM
}

// sourceConfig fills in cfg's PRM sources from o.
func (o Options) sourceConfig(cfg *Config) error {
	if o.PRMFile != "" && len(o.PRMSources) > 0 {
		return errors.New("pipeline: prm and prm-source both name the PRM: give one")
	}
	builtin := o.InitPolicy == InitPolicySource // the start is chosen among them
	if o.needsSourcePRM() {
		cfg.Sources = slices.Clone(o.PRMSources)
		builtin = builtin || len(cfg.Sources) == 0
	}
	if !builtin {
		return nil
	}
	runs, err := o.SourceRuns()
	if err != nil {
		return err
	}
	prmFromBuiltin := o.needsSourcePRM() && len(o.PRMSources) == 0
	for _, s := range runs {
		sc, err := s.Config()
		if err != nil {
			return fmt.Errorf("pipeline: PRM source run %s: %w", s.Run, err)
		}
		cfg.SourceRuns = append(cfg.SourceRuns, sc)
		if prmFromBuiltin {
			cfg.Sources = append(cfg.Sources, sc.run())
		}
	}
	return nil
}

// runSources trains every built-in source run that has not finished (each
// a whole run of its own, on the same data directory or server), unless
// the run has begun already: its PRM is published then, and the built-in
// source runs of this build may not be the ones it was trained on.
func runSources(ctx context.Context, cfg Config) error {
	if len(cfg.SourceRuns) == 0 {
		return nil
	}
	begun, stale, err := sourceState(ctx, cfg)
	if err != nil || begun {
		return err
	}
	for i, sc := range cfg.SourceRuns {
		sc.NATSURL, sc.Connect, sc.Logger, sc.SyncAlways, sc.Streams = cfg.NATSURL, cfg.Connect, cfg.Logger, cfg.SyncAlways, cfg.Streams
		sc.OnSourcePRM, sc.OnPRMEpoch, sc.Progress, sc.Revision = cfg.OnSourcePRM, cfg.OnPRMEpoch, cfg.SourceProgress, cfg.Revision
		// Announced where its own work starts: a curriculum's later stage
		// first trains its PRM on the runs before it.
		sc.OnStarting = func() {
			if cfg.OnSource != nil {
				cfg.OnSource(sc.run(), i+1, len(cfg.SourceRuns))
			}
			if revs, ok := stale[sc.run()]; ok && cfg.OnStaleSource != nil {
				cfg.OnStaleSource(sc.run(), revs)
			}
		}
		if _, err := Run(ctx, sc); err != nil {
			return fmt.Errorf("pipeline: PRM source run %s: %w", sc.run(), err)
		}
	}
	return nil
}

// PrepareSources trains what a new run of cfg would train before its
// first update, where the run would keep it — its built-in source runs
// that have not finished and the PRM on its sources, stored as a
// snapshot — and stops there: a run of the same sources and PRM settings
// on that store (or a copy of it) then reuses both. Without sources it
// does nothing. Experiment suites use it to train the source runs once
// and give each run a copy of the store.
func PrepareSources(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	cfg = cfg.withDefaults()
	needPRM := len(cfg.Sources) > 0 && cfg.Learner.PRM == nil
	if len(cfg.SourceRuns) == 0 && !needPRM {
		return nil
	}
	if err := runSources(ctx, cfg); err != nil {
		return err
	}
	if !needPRM { // the source runs are a start to choose from (InitPolicySource) only
		return nil
	}
	_, js, shutdown, err := connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer shutdown()
	if err := streams.Ensure(ctx, js, cfg.Streams); err != nil {
		return err
	}
	_, _, err = storedSourcePRM(ctx, js, cfg)
	return err
}

// sourceState says whether cfg's run has a checkpoint in its store and,
// when it has none and cfg knows its revision, which of its built-in
// source runs an earlier process ran with other code (staleSources). An
// embedded server is started for the questions and stopped again, so the
// source runs can start theirs on the same store.
func sourceState(ctx context.Context, cfg Config) (begun bool, stale map[string][]string, err error) {
	_, js, shutdown, err := connect(ctx, cfg)
	if err != nil {
		return false, nil, err
	}
	defer shutdown()
	_, begun, err = learnersvc.LoadCheckpoint(ctx, js, cfg.run())
	if errors.Is(err, jetstream.ErrBucketNotFound) { // a fresh store: no run has begun
		return false, nil, nil
	}
	if err != nil || begun || cfg.Revision == "" {
		return begun, nil, err
	}
	stale, err = staleSources(ctx, js, cfg)
	return false, stale, err
}

// staleSources maps each built-in source run of cfg that has begun and
// was run by code other than cfg.Revision (or by code that did not say)
// to the revisions that ran it (Config.OnStaleSource).
func staleSources(ctx context.Context, js jetstream.JetStream, cfg Config) (map[string][]string, error) {
	stale := map[string][]string{}
	for _, sc := range cfg.SourceRuns {
		_, started, err := learnersvc.LoadCheckpoint(ctx, js, sc.run())
		if err != nil {
			return nil, err
		}
		if !started {
			continue
		}
		cost, err := readCost(ctx, js, sc.run())
		if err != nil {
			return nil, err
		}
		// Any other revision counts, even beside this one (a run resumed
		// by this code after other code recorded part of it).
		if len(cost.Revisions) == 0 || slices.ContainsFunc(cost.Revisions, func(r string) bool { return r != cfg.Revision }) {
			stale[sc.run()] = cost.Revisions
		}
	}
	return stale, nil
}

// sourceSteps adds up the environment steps of the source runs, and of
// the runs their own PRMs were trained on (a curriculum's earlier stages),
// each run once, for the compute-fair count: the PRM's knowledge was paid
// for in those steps.
func sourceSteps(ctx context.Context, js jetstream.JetStream, runs []string) (int64, error) {
	var n int64
	seen := map[string]bool{}
	for len(runs) > 0 {
		run := runs[0]
		runs = runs[1:]
		if seen[run] {
			continue
		}
		seen[run] = true
		cp, ok, err := learnersvc.LoadCheckpoint(ctx, js, run)
		if err != nil {
			return 0, err
		}
		if ok {
			n += cp.EnvStepsActor + cp.EnvStepsExplorer
		}
		rec, err := loadSourcePRMRecord(ctx, js, run)
		if err != nil {
			return 0, err
		}
		if rec != nil {
			runs = append(runs, rec.Provenance.Sources...)
		}
	}
	return n, nil
}
