package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/envs"
	_ "github.com/rspo-dev/rspo/envs/shop"
	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/prm/prmsvc"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
	"github.com/rspo-dev/rspo/swapper/swappertest"
)

func TestWithRecipeKeepsWhatTheUserGave(t *testing.T) {
	o := DefaultOptions()
	given := map[string]bool{"explore-collect": true}
	o.Explore.Collect = 5
	got, err := o.WithRecipe(func(k string) bool { return given[k] })
	if err != nil {
		t.Fatal(err)
	}
	if got.Explore.Tilt != 10 || got.OffRatio != "old" || got.PRMTarget != "step" || got.Explore.Collect != 5 || got.PRMFeatures != PRMFeaturesContext {
		t.Errorf("tilted recipe: got tilt %v, ratio %s, target %s, collect %d, features %s; want 10, old, step, the given 5 and context",
			got.Explore.Tilt, got.OffRatio, got.PRMTarget, got.Explore.Collect, got.PRMFeatures)
	}
	if got.OffCredit != "no-loops" {
		t.Errorf("tilted recipe: off-credit %q, want no-loops", got.OffCredit)
	}
	o.Recipe = RecipePaper
	if got, _ := o.WithRecipe(func(string) bool { return false }); got.Explore.Tilt != 0 || got.OffRatio != "behaviour" || got.OffCredit != "episode" {
		t.Errorf("paper recipe changed the defaults: tilt %v, ratio %s, credit %s", got.Explore.Tilt, got.OffRatio, got.OffCredit)
	}
	o.Recipe = "vibes"
	if _, err := o.WithRecipe(func(string) bool { return false }); err == nil {
		t.Error("an unknown recipe was accepted")
	}
}

// The tilted recipe's PRM comes from source runs on the easier preset:
// they are trained once, the PRM is trained on what they recorded, their
// environment steps are counted, and a later run reuses them and the PRM.
func TestTiltedRecipeTrainsItsPRMOnSourceRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	dir := t.TempDir()
	target := func(run string) Config {
		// pick-two among the types: the household's curriculum has two stages
		cfg := tinyRecipeRun(t, run, dir, func(o *Options) { o.EnvOptions["task_types"] = "pick_and_place,pick_two_and_place" })
		for i := range cfg.SourceRuns { // small source runs: the mechanism, not the figures
			cfg.SourceRuns[i].Learner.Updates, cfg.SourceRuns[i].Learner.Tasks, cfg.SourceRuns[i].Learner.GroupSize = 2, 4, 4
			cfg.SourceRuns[i].Learner.EvalEpisodes, cfg.SourceRuns[i].Settings = 4, nil
		}
		cfg.NATSURL, cfg.Logger = s.ClientURL(), smallRun(t, dir, true).Logger
		return cfg
	}
	first := target("tilted1")
	var trainings []int // PRM trainings announced, on how many trajectories
	var order []string  // source runs and PRM trainings, as announced
	first.OnSourcePRM = func(n int) { trainings, order = append(trainings, n), append(order, "prm") }
	first.OnSource = func(run string, i, n int) { order = append(order, fmt.Sprintf("source %d/%d", i, n)) }
	stale := map[string][]string{} // source runs reused from other code, by whom
	first.OnStaleSource = func(run string, by []string) { stale[run] = by }
	first.Revision = "rev-a"
	epochs, sourceUpdates := 0, 0
	first.OnPRMEpoch = func(prm.EpochProgress) { epochs++ }
	first.SourceProgress = func(learnersvc.Progress) { sourceUpdates++ }
	// The household's easier setting has two stages (envs.StagedCurriculum).
	if len(first.SourceRuns) != 3 || first.Learner.Explore.Tilt != 10 {
		t.Fatalf("config: %d source runs, tilt %v; want 3 and 10", len(first.SourceRuns), first.Learner.Explore.Tilt)
	}
	sum, err := Run(context.Background(), first)
	if err != nil {
		t.Fatal(err)
	}
	// The second stage's PRM on the first stage's 2 runs × 2 updates × 4
	// tasks × 4 rollouts, then the target's on those and the second
	// stage's rollouts and explorer trajectories; each says how it goes.
	if len(trainings) != 2 || trainings[0] != 2*2*4*4 || trainings[1] <= trainings[0] {
		t.Fatalf("PRM trainings announced on %v trajectories, want the second stage's on 64 and the target's on more", trainings)
	}
	// The second stage is announced where it starts: after its PRM.
	if want := []string{"source 1/3", "source 2/3", "prm", "source 3/3", "prm"}; !slices.Equal(order, want) {
		t.Errorf("announced %v, want %v", order, want)
	}
	announced := trainings[1]
	if epochs < 2 || sourceUpdates != 3*2 {
		t.Errorf("heard %d PRM epochs and %d source-run updates, want some of each training's epochs and every update of the 3 source runs (6)", epochs, sourceUpdates)
	}
	var srcSteps int64
	for _, run := range first.Sources {
		cp, ok, err := learnersvc.LoadCheckpoint(context.Background(), js, run)
		if err != nil || !ok || !cp.Finished {
			t.Fatalf("source run %s: %+v (found %v, %v)", run, cp, ok, err)
		}
		srcSteps += cp.EnvStepsActor + cp.EnvStepsExplorer
	}
	if sum.EnvStepsSource != srcSteps || srcSteps == 0 {
		t.Errorf("source steps in the summary: %d, want the source runs' %d", sum.EnvStepsSource, srcSteps)
	}
	cp, _, err := learnersvc.LoadCheckpoint(context.Background(), js, "tilted1")
	if err != nil {
		t.Fatal(err)
	}
	m, err := prmsvc.Load(context.Background(), js, "tilted1", cp.PRMVersion)
	if err != nil {
		t.Fatal(err)
	}
	// every trajectory the source runs recorded (their evaluations' none: in-process)
	if n := m.Info.TrainTrajectories + m.Info.Heldout; m.Info.Target != "step" || !m.Info.Trained || n != announced {
		t.Errorf("PRM %+v: want a step-target PRM trained on the source runs' %d trajectories (got %d)", m.Info, announced, n)
	}
	if len(stale) > 0 || !slices.Equal(sum.Revisions, []string{"rev-a"}) {
		t.Errorf("first run: stale source runs %v, revisions %v; want none and [rev-a]", stale, sum.Revisions)
	}
	// A second run by other code reuses the source runs and says so.
	second := target("tilted2")
	second.OnSourcePRM, second.OnStaleSource, second.Revision = first.OnSourcePRM, first.OnStaleSource, "rev-b"
	sum2, err := Run(context.Background(), second)
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) != len(second.SourceRuns) || !slices.Equal(sum2.Revisions, []string{"rev-b"}) {
		t.Errorf("second run: stale source runs %v, revisions %v; want all %d recorded by [rev-a], and [rev-b]", stale, sum2.Revisions, len(second.SourceRuns))
	}
	for run, by := range stale {
		if !slices.Equal(by, []string{"rev-a"}) {
			t.Errorf("source run %s said to be recorded by %v, want [rev-a]", run, by)
		}
	}
	// The second run reported the finished source runs without training
	// them: the code that recorded them finds them its own again.
	clear(stale)
	third := target("tilted3")
	third.OnSourcePRM, third.OnStaleSource, third.Revision = first.OnSourcePRM, first.OnStaleSource, "rev-a"
	if _, err := Run(context.Background(), third); err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		t.Errorf("a third run by the source runs' own code: stale source runs %v, want none", stale)
	}
	if len(trainings) != 2 {
		t.Errorf("PRM trainings announced %v over a run that trains them and one that reuses them, want the first run's 2", trainings)
	}
	if sum2.EnvStepsSource != srcSteps {
		t.Errorf("second run: source steps %d, want the same %d (reused, not trained again)", sum2.EnvStepsSource, srcSteps)
	}
	if sum.SourcePRM == nil || sum.SourcePRM.Reused || sum2.SourcePRM == nil || !sum2.SourcePRM.Reused || sum2.SourcePRM.Object != sum.SourcePRM.Object {
		t.Errorf("PRM records: first %+v, second %+v; want the second to reuse the PRM the first trained", sum.SourcePRM, sum2.SourcePRM)
	}

	// The first run again, by a build whose built-in source runs have
	// other names: the run has its PRM, so they are not recorded, and
	// its summary still counts the source runs the PRM came from.
	again := target("tilted1")
	for i := range again.SourceRuns {
		again.SourceRuns[i].Learner.Run += "-renamed"
		again.Sources[i] = again.SourceRuns[i].Learner.Run
	}
	sum3, err := Run(context.Background(), again)
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range again.Sources {
		if _, ok, err := learnersvc.LoadCheckpoint(context.Background(), js, run); err != nil || ok {
			t.Errorf("source run %s was recorded for a run that had begun (found %v, %v)", run, ok, err)
		}
	}
	if sum3.EnvStepsSource != srcSteps {
		t.Errorf("resumed run: source steps %d, want its PRM's sources' %d", sum3.EnvStepsSource, srcSteps)
	}
}

// A PRM source run whose own PRM came from other runs brings their steps
// too: a run tilted by a PRM of B, whose PRM came from A, counts A's and
// B's environment steps, each once.
func TestSourceStepsCountTheSourcesOfSources(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	s := streamstest.RunServer(t)
	dir := t.TempDir()
	run := func(name string, rspo bool, sources ...string) Summary {
		cfg := tinyRecipeRun(t, name, dir, func(o *Options) {
			o.RSPO, o.PRMSources = rspo, sources
			if !rspo {
				o.Recipe = RecipePaper
			}
		})
		cfg.NATSURL, cfg.Logger = s.ClientURL(), smallRun(t, dir, true).Logger
		sum, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	a := run("a", false)
	b := run("b", true, "a")
	c := run("c", true, "b")
	d := run("d", true, "b", "a") // a named directly and as b's source
	if b.EnvStepsSource != a.EnvSteps || a.EnvSteps == 0 {
		t.Errorf("b's source steps %d, want a's %d", b.EnvStepsSource, a.EnvSteps)
	}
	want := a.EnvSteps + b.EnvSteps
	if c.EnvStepsSource != want {
		t.Errorf("c's source steps %d, want b's and its source a's %d", c.EnvStepsSource, want)
	}
	if d.EnvStepsSource != want {
		t.Errorf("d's source steps %d, want %d (a counted once)", d.EnvStepsSource, want)
	}

	// b again, with another source list than its PRM was trained on (as
	// when a newer build names other built-in source runs): b's PRM is
	// a's, so its summary counts a's steps, not those of the runs named now.
	cfg := tinyRecipeRun(t, "b", dir, func(o *Options) { o.PRMSources = []string{"a"} })
	cfg.NATSURL, cfg.Logger, cfg.Sources = s.ClientURL(), smallRun(t, dir, true).Logger, []string{"c"}
	again, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if again.EnvStepsSource != a.EnvSteps {
		t.Errorf("b resumed with other sources named: source steps %d, want those its PRM came from, a's %d", again.EnvStepsSource, a.EnvSteps)
	}
}

// tinyRecipeRun is the configuration of a 2-update run of rspo run's
// recipe on the easy preset, after set has changed its options.
func tinyRecipeRun(t *testing.T, run, dir string, set func(*Options)) Config {
	t.Helper()
	o := DefaultOptions()
	o.Run, o.Data, o.EnvOptions = run, dir, map[string]string{"preset": "easy"}
	o.Updates, o.Tasks, o.GroupSize, o.K, o.Alpha, o.EvalEpisodes = 2, 4, 4, 2, 0.25, 4
	set(&o)
	o, err := o.WithRecipe(func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := o.Config()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// The built-in source runs are played in the target's easier setting and
// pose every task type the target trains on: a PRM that never saw a type's
// own steps succeed cannot steer them (sources of pick_and_place alone
// taught some target runs clean, heat and cool and others none).
func TestSourceRunsCoverTheTargetsTaskTypes(t *testing.T) {
	trainTypes := func(env string, opts map[string]string) []string {
		t.Helper()
		e, err := envs.New(env, opts)
		if err != nil {
			t.Fatal(err)
		}
		return e.(envs.TrainTaskTyper).TrainTaskTypes()
	}
	names := map[string]string{} // by preset
	for _, preset := range []string{"medium", "alfworld", "hard"} {
		o := DefaultOptions()
		o.Algo, o.EnvOptions = "ppo", map[string]string{"preset": preset}
		runs, err := o.SourceRuns()
		if err != nil {
			t.Fatal(err)
		}
		if preset == "medium" { // no pick-two to train: one stage
			if len(runs) != len(SourceSeeds) {
				t.Fatalf("%s: %d source runs, want %d (one stage)", preset, len(runs), len(SourceSeeds))
			}
			names[preset] = runs[0].Run
			continue
		}
		if len(runs) != len(SourceSeeds)+1 {
			t.Fatalf("%s: %d source runs, want %d and a second stage", preset, len(runs), len(SourceSeeds))
		}
		first, second := runs[:len(SourceSeeds)], runs[len(SourceSeeds)]
		for _, s := range runs {
			if s.EnvOptions["preset"] != "easy" || s.Algo != "ppo" || s.Updates != 100 || s.Env != "household" {
				t.Errorf("%s: source run %+v: want ppo on the easy preset for 100 updates", preset, s)
			}
			if got, want := trainTypes(s.Env, s.EnvOptions), trainTypes("household", o.EnvOptions); !slices.Equal(got, want) {
				t.Errorf("%s: source run poses %v, want the target's %v", preset, got, want)
			}
		}
		var firstNames []string
		for _, s := range first {
			if s.RSPO {
				t.Errorf("%s: first-stage source run %s trains with RSPO, want the base algorithm", preset, s.Run)
			}
			firstNames = append(firstNames, s.Run)
		}
		if !second.RSPO || second.Recipe != RecipeTilted || second.Explore.Tilt != 10 || second.Seed != SourceStageSeed || !slices.Equal(second.PRMSources, firstNames) {
			t.Errorf("%s: second stage %+v: want the tilted recipe, seed %d, on the PRM of %v", preset, second, SourceStageSeed, firstNames)
		}
		names[preset] = runs[0].Run
	}
	// The ALFWorld-sized and hard presets both train all six types, so the
	// same source runs serve both; medium trains four.
	if names["alfworld"] != names["hard"] || names["medium"] == names["alfworld"] {
		t.Errorf("source run names %v: want medium's own and one shared by alfworld and hard", names)
	}

	shop := DefaultOptions()
	shop.Env = "shop"
	runs, err := shop.SourceRuns()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != len(SourceSeeds) || runs[0].EnvOptions["preset"] != "easy" || !strings.HasPrefix(runs[0].Run, "prm-source-shop-easy-") {
		t.Errorf("shop source runs %d, first %s with %v: want %d, one stage, on the easy preset", len(runs), runs[0].Run, runs[0].EnvOptions, len(SourceSeeds))
	}
	// Each environment says how long its source runs train, and the length
	// is in their names, so runs recorded at another length are not reused.
	for _, s := range runs {
		if s.Updates != 30 || !strings.Contains(s.Run, "-u30-") {
			t.Errorf("shop source run %s trains %d updates: want the shop's 30, named so", s.Run, s.Updates)
		}
	}
}

func TestSourceRunsNeedAnEasierSetting(t *testing.T) {
	o := DefaultOptions()
	o.Env = swappertest.Env
	if _, err := o.SourceRuns(); err == nil || !strings.Contains(err.Error(), "--prm-source") {
		t.Errorf("an environment with no easier setting: err %v, want one that names --prm and --prm-source", err)
	}
}

// noLengthEnv is an environment whose easier setting asks for source runs
// of no updates: a mistake SourceRuns must report, not train.
type noLengthEnv struct{ envs.Env }

func (noLengthEnv) SourceOptions() map[string]string { return map[string]string{} }
func (noLengthEnv) SourceUpdates() int               { return 0 }

const noLengthEnvName = "pipeline-test-no-source-length"

func init() {
	envs.Register(noLengthEnvName, func(opts map[string]string) (envs.Env, error) {
		env, err := envs.New(swappertest.Env, opts)
		return noLengthEnv{env}, err
	})
}

func TestSourceRunsNeedALength(t *testing.T) {
	o := DefaultOptions()
	o.Env = noLengthEnvName
	if runs, err := o.SourceRuns(); err == nil || !strings.Contains(err.Error(), noLengthEnvName) {
		t.Errorf("source runs of 0 updates: runs %d, err %v; want an error naming the environment", len(runs), err)
	}
}

// On a fresh store, where not even the state bucket exists yet, no run
// has begun: the source runs are to be recorded, not an error reported.
func TestSourceStateOnAFreshStore(t *testing.T) {
	s := streamstest.RunServer(t)
	cfg := Config{NATSURL: s.ClientURL(), Revision: "abc", SourceRuns: []Config{{}}}
	cfg.Learner.Run, cfg.SourceRuns[0].Learner.Run = "fresh", "source"
	begun, stale, err := sourceState(context.Background(), cfg)
	if err != nil || begun || len(stale) > 0 {
		t.Errorf("fresh store: begun %v, stale source runs %v, err %v; want false, none and no error", begun, stale, err)
	}
}

// rspo run's default on a new data directory: the embedded store starts
// empty, the built-in source runs are recorded in it, then the run trains.
func TestTiltedRecipeOnANewDataDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	dir := t.TempDir()
	cfg := tinyRecipeRun(t, "fresh", dir, func(*Options) {})
	for i := range cfg.SourceRuns { // small source runs: the mechanism, not the figures
		cfg.SourceRuns[i].Learner.Updates, cfg.SourceRuns[i].Learner.Tasks, cfg.SourceRuns[i].Learner.GroupSize = 2, 4, 4
		cfg.SourceRuns[i].Learner.EvalEpisodes, cfg.SourceRuns[i].Settings = 4, nil
	}
	cfg.Logger = smallRun(t, dir, true).Logger
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Updates != 2 || sum.EnvStepsSource == 0 || sum.SourcePRM == nil {
		t.Errorf("summary %+v: want 2 updates, the source runs' steps and their PRM's record", sum)
	}
}

// PrepareSources trains the source runs and their PRM and stops; a run
// started on a copy of that store trains neither again, still counts the
// source runs' steps, and the prepared store holds no trace of the run.
func TestPrepareSourcesThenRunOnACopy(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	shared, copied := filepath.Join(t.TempDir(), "shared"), filepath.Join(t.TempDir(), "run")
	small := func(cfg Config) Config {
		for i := range cfg.SourceRuns {
			cfg.SourceRuns[i].Learner.Updates, cfg.SourceRuns[i].Learner.Tasks, cfg.SourceRuns[i].Learner.GroupSize = 2, 4, 4
			cfg.SourceRuns[i].Learner.EvalEpisodes, cfg.SourceRuns[i].Settings = 4, nil
		}
		cfg.Logger = smallRun(t, t.TempDir(), true).Logger
		return cfg
	}
	trained := 0
	count := func(int) { trained++ }
	prep := small(tinyRecipeRun(t, "target", shared, func(*Options) {}))
	prep.OnSourcePRM = count
	if err := PrepareSources(context.Background(), prep); err != nil {
		t.Fatal(err)
	}
	if trained != 1 {
		t.Fatalf("PrepareSources trained the PRM %d times, want 1", trained)
	}
	if err := PrepareSources(context.Background(), prep); err != nil || trained != 1 {
		t.Fatalf("PrepareSources again: %v, PRM trained %d times in all; want no error and still 1", err, trained)
	}
	if err := os.CopyFS(copied, os.DirFS(shared)); err != nil {
		t.Fatal(err)
	}
	run := small(tinyRecipeRun(t, "target", copied, func(*Options) {}))
	run.OnSourcePRM = count
	announced := 0
	run.OnSource = func(string, int, int) { announced++ }
	sum, err := Run(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	if trained != 1 || sum.SourcePRM == nil || !sum.SourcePRM.Reused {
		t.Errorf("run on the copy: PRM trained %d times in all, record %+v; want it reused, not trained", trained, sum.SourcePRM)
	}
	if sum.EnvStepsSource == 0 || sum.Updates != 2 {
		t.Errorf("run on the copy: %d updates, source steps %d; want 2 and the source runs' steps", sum.Updates, sum.EnvStepsSource)
	}
	e, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: filepath.Join(shared, "nats"), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Shutdown()
	_, js := streamstest.Connect(t, e.Server())
	if _, ok, err := learnersvc.LoadCheckpoint(context.Background(), js, "target"); err != nil || ok {
		t.Errorf("the prepared store holds a checkpoint of the target run (found %v, %v)", ok, err)
	}
}
