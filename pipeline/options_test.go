package pipeline

import (
	"reflect"

	"encoding/json"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/learner/learnersvc"

	"github.com/rspo-dev/rspo/prm"
)

func TestOptionsValidateRefusesZeroCounts(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Options)
		want string // "" means valid
	}{
		{"defaults", func(*Options) {}, ""},
		{"updates 0", func(o *Options) { o.Updates = 0 }, "updates 0"},
		{"group 0", func(o *Options) { o.GroupSize = 0 }, "group 0"},
		{"eval-episodes 0", func(o *Options) { o.EvalEpisodes = 0 }, "eval-episodes 0"},
		{"derived explore-group 0", func(o *Options) { o.Explore.GroupSize = 0 }, ""},
		{"negative keep-versions", func(o *Options) { o.KeepVersions = -1 }, "keep-versions -1"},
		{"refresh window without refresh", func(o *Options) { o.PRMRefreshWindow = 100 }, "prm-refresh-window"},
		{"lr 0", func(o *Options) { o.LR = 0 }, "lr 0"},
		{"refresh epochs 0", func(o *Options) { o.PRMRefresh, o.PRMRefreshEpochs = true, 0 }, "prm-refresh-epochs 0"},
		{"negative refresh epochs", func(o *Options) { o.PRMRefresh, o.PRMRefreshEpochs = true, -3 }, "prm-refresh-epochs -3"},
		{"refresh epochs without refresh", func(o *Options) { o.PRMRefreshEpochs = 500 }, "prm-refresh-epochs 500: want to be left alone without prm-refresh"},
		{"unknown environment", func(o *Options) { o.Env = "houshold" }, "env houshold: want"},
		{"alpha above 1", func(o *Options) { o.Alpha = 1.5 }, "alpha 1.5: want a number from 0 to 1"},
		{"tilt out of range", func(o *Options) { o.Explore.Tilt = 1e308 }, "explore-tilt 1e+308: want a number from 0 to 1000"},
		{"unknown algorithm", func(o *Options) { o.Algo = "ppo2" }, "algo ppo2: want one of grpo, ppo, gigpo"},
		{"unknown environment option", func(o *Options) { o.EnvOptions = map[string]string{"presett": "easy"} }, "env household: want"},
		{"refresh with epochs", func(o *Options) { o.PRMRefresh, o.PRMRefreshEpochs = true, 500 }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			tt.edit(&o)
			err := o.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("valid options refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error naming %q", err, tt.want)
			}
		})
	}
}

func TestOptionsJSONKeysAreFlagNamesAndOldKeysRead(t *testing.T) {
	b, err := json.Marshal(DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"group":8`, `"env-opt":null`, `"eval-episodes":64`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("encoded options %s lack %s", b, key)
		}
	}
	o := DefaultOptions()
	if err := json.Unmarshal([]byte(`{"group_size": 4, "env_options": {"preset": "easy"}, "eval-episodes": 8}`), &o); err != nil {
		t.Fatal(err)
	}
	if o.GroupSize != 4 || o.EnvOptions["preset"] != "easy" || o.EvalEpisodes != 8 || o.Updates != 30 {
		t.Errorf("decoded %+v", o)
	}
	for _, bad := range []struct{ in, want string }{
		{`{"group": 4, "group_size": 4}`, "same option"},
		{`{"groups": 4}`, `unknown key "groups"`},
		{`{"seed": "x"}`, `key "seed": "x" is not an integer`},
	} {
		if err := json.Unmarshal([]byte(bad.in), &o); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: got %v, want an error with %q", bad.in, err, bad.want)
		}
	}
}

// Settings recorded with the older keys and zero-means-default values
// compare equal to the same run's settings now.
func TestUpgradeSettingsMatchesCurrent(t *testing.T) {
	old := `{"env":"household","env_options":null,"algo":"grpo","rspo":true,"dense_only":false,"alpha":0.125,"k":3,
	"updates":30,"tasks":16,"group_size":8,"seed":1,"lr":0,"epochs":0,"beta":0,"eps_on":0,"eps_off":0,"off_ratio":"",
	"explorer":"prm","swap_all":false,"explore_group_size":0,"explore_collect":1,"prm":"","prm_refresh":false,
	"prm_refresh_extra_run":null,"prm_refresh_window":0,"prm_warmup_tasks":0,"prm_target":"","prm_noise":0,
	"gate_auc":0,"explore_tilt":0,"eval_episodes":0,"eval_greedy":false,"eval_splits":null}`
	was, err := decodeSettings([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	paper := DefaultOptions()
	paper.Recipe = RecipePaper // runs recorded before recipes existed used the paper's
	if diff := settingsDiff(upgradeSettings(was), paper.Settings()); len(diff) > 0 {
		t.Errorf("upgraded settings differ from the defaults: %v", diff)
	}
	if diff := settingsDiff(was, DefaultOptions().Settings()); len(diff) == 0 {
		t.Error("the raw old settings compare equal: the test checks nothing")
	}
}

// Settings recorded before prm-refresh-epochs existed read as the refresh
// those runs had: the trainer's full budget with refresh, else the default.
// A refreshing run resumed with the new default is refused, naming the
// key, not silently continued on another budget.
func TestUpgradeSettingsGivesOlderRefreshRunsTheFullBudget(t *testing.T) {
	for _, refresh := range []bool{false, true} {
		o := DefaultOptions()
		o.PRMRefresh = refresh
		was := o.Settings()
		delete(was, "prm-refresh-epochs")
		up := upgradeSettings(was)
		then := o
		if refresh {
			then.PRMRefreshEpochs = LegacyPRMRefreshEpochs
		}
		if diff := settingsDiff(up, then.Settings()); len(diff) > 0 {
			t.Errorf("refresh %v: upgraded settings differ from the run's: %v", refresh, diff)
		}
		diff := settingsDiff(up, o.Settings())
		if refresh && (len(diff) != 1 || !strings.Contains(diff[0], "prm-refresh-epochs 500 (now 10)")) {
			t.Errorf("an older refreshing run against the new default: diff %v, want prm-refresh-epochs 500 (now 10)", diff)
		}
		if _, ok := was["prm-refresh-epochs"]; ok {
			t.Error("upgradeSettings modified its argument")
		}
	}
}

// Settings recorded before off-credit existed read as the paper's
// episode credit every run had then: a recorded source run (the base
// algorithm) resumes, and a tilted run recorded then is refused by name
// against the recipe's new no-loops, not continued under another rule.
func TestUpgradeSettingsGivesOlderRunsEpisodeCredit(t *testing.T) {
	source := DefaultOptions()
	source.Recipe, source.RSPO = RecipePaper, false
	was := source.Settings()
	delete(was, "off-credit")
	if diff := settingsDiff(upgradeSettings(was), source.Settings()); len(diff) > 0 {
		t.Errorf("an older source run against today's: diff %v, want none", diff)
	}
	tilted, err := DefaultOptions().WithRecipe(func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	was = tilted.Settings()
	delete(was, "off-credit")
	diff := settingsDiff(upgradeSettings(was), tilted.Settings())
	if len(diff) != 1 || !strings.Contains(diff[0], `off-credit "episode" (now "no-loops")`) {
		t.Errorf("an older tilted run against the recipe: diff %v, want off-credit \"episode\" (now \"no-loops\")", diff)
	}
}

func TestConfigPassesTheRefreshBudget(t *testing.T) {
	o := DefaultOptions()
	o.Recipe, o.PRMRefresh, o.PRMRefreshEpochs = RecipePaper, true, 7
	cfg, err := o.Config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Learner.PRMRefreshEpochs != 7 || !cfg.Learner.PRMRefresh {
		t.Errorf("learner refresh epochs %d (refresh %v), want 7", cfg.Learner.PRMRefreshEpochs, cfg.Learner.PRMRefresh)
	}
	if err := cfg.Learner.Validate(); err != nil {
		t.Errorf("learner config refused: %v", err)
	}
	o.PRMRefresh, o.PRMRefreshEpochs = false, DefaultPRMRefreshEpochs
	if cfg, err = o.Config(); err != nil || cfg.Learner.PRMRefreshEpochs != 0 {
		t.Errorf("without refresh: learner refresh epochs %d (%v), want 0 (unused)", cfg.Learner.PRMRefreshEpochs, err)
	}
}

func TestPRMFeaturesChoosesTheFeaturizer(t *testing.T) {
	for _, tc := range []struct {
		value   string
		context bool
		err     bool
	}{
		{PRMFeaturesHash, false, false}, {PRMFeaturesContext, true, false}, {"", false, true}, {"bert", false, true},
	} {
		o := DefaultOptions()
		o.PRMFeatures = tc.value
		cfg, err := o.Config()
		if tc.err {
			if err == nil || !strings.Contains(err.Error(), "prm-features") {
				t.Errorf("prm-features %q: got error %v, want one naming prm-features", tc.value, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("prm-features %q: %v", tc.value, err)
		}
		h, ok := cfg.Learner.PRMTrain.Featurizer.(*prm.HashProjection)
		if !ok || h.Config().ActionContext != tc.context {
			t.Errorf("prm-features %q: got featurizer %#v, want a hash projection with ActionContext %v", tc.value, cfg.Learner.PRMTrain.Featurizer, tc.context)
		}
	}
}

// TestRunNameNamesThePreset: the same command on two presets (e.g. the
// default preset and preset=medium) trains two runs, not one run refused
// on resume.
func TestRunNameNamesThePreset(t *testing.T) {
	o := DefaultOptions()
	if got := o.RunName(); got != "household-grpo-rspo-prm-s1" {
		t.Errorf("default preset: got %s", got)
	}
	o.EnvOptions = map[string]string{"preset": "medium"}
	if got := o.RunName(); got != "household-medium-grpo-rspo-prm-s1" {
		t.Errorf("medium preset: got %s, want household-medium-grpo-rspo-prm-s1", got)
	}
	o.EnvOptions = map[string]string{"preset": "no such/preset"}
	if got := o.RunName(); got != "household-grpo-rspo-prm-s1" {
		t.Errorf("a preset that cannot be part of a name: got %s (Validate reports the preset)", got)
	}
}

// A pipelined run is named apart from the synchronous one (whose name
// stays what it was), so the same command with --max-staleness trains a
// run of its own instead of refusing the recorded settings.
func TestRunNameNamesThePipelinedRun(t *testing.T) {
	o := DefaultOptions()
	if got := o.RunName(); got != "household-grpo-rspo-prm-s1" {
		t.Errorf("max-staleness 0: got %q", got)
	}
	o.MaxStaleness = 2
	if got := o.RunName(); got != "household-grpo-rspo-prm-s1-stale2" {
		t.Errorf("max-staleness 2: got %q", got)
	}
}

// The learner service's own defaults (for Go users who fill a
// learnersvc.Config by hand) are the settings table's: a configuration
// made from the default options equals the zero configuration with the
// service's defaults filled in, field by field, wherever both speak.
func TestLearnerServiceDefaultsAreTheTables(t *testing.T) {
	o := DefaultOptions()
	o.Recipe, o.Run = RecipePaper, "r"
	cfg, err := o.Config()
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.Learner.WithDefaults()
	want := learnersvc.Config{Run: "r"}.WithDefaults()
	for _, c := range []struct {
		key       string
		got, want any
	}{
		{"env", got.Env, want.Env}, {"updates", got.Updates, want.Updates}, {"tasks", got.Tasks, want.Tasks},
		{"group", got.GroupSize, want.GroupSize}, {"seed", got.Seed, want.Seed}, {"k", got.K, want.K},
		{"prm-warmup-tasks", got.PRMWarmupTasks, want.PRMWarmupTasks}, {"eval-every", got.EvalEvery, want.EvalEvery},
		{"eval-episodes", got.EvalEpisodes, want.EvalEpisodes}, {"eval-shards", got.EvalShards, want.EvalShards},
		{"keep-versions", got.KeepVersions, want.KeepVersions}, {"explore (all)", got.Explore, want.Explore},
		{"alpha", got.Trainer.Alpha, want.Trainer.Alpha}, {"lr", got.Trainer.LR, want.Trainer.LR},
		{"epochs", got.Trainer.Epochs, want.Trainer.Epochs}, {"beta", got.Trainer.Beta, want.Trainer.Beta},
		{"eps-on", got.Trainer.EpsOn, want.Trainer.EpsOn}, {"eps-off", got.Trainer.EpsOff, want.Trainer.EpsOff},
		{"off-ratio", got.Trainer.OffRatio, want.Trainer.OffRatio}, {"off-credit", got.Trainer.OffCredit, want.Trainer.OffCredit},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: the table's default gives %v, the learner service's %v", c.key, c.got, c.want)
		}
	}
}
