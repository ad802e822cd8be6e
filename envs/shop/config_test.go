package shop

import (
	"errors"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/envs"
)

func TestParseOptions(t *testing.T) {
	tests := []struct {
		name string
		opts map[string]string
		want Config
	}{
		{"nil is the standard preset", nil,
			Config{Preset: PresetStandard, MaxSteps: 15, CatalogueSize: 2000, Goals: 6500, NearDuplicates: 6, Queries: 5, GoalAttributes: 3, GoalOptions: 2, Reward: RewardScore}},
		{"easy preset", map[string]string{"preset": "easy"},
			Config{Preset: PresetEasy, MaxSteps: 20, CatalogueSize: 2000, Goals: 6500, NearDuplicates: 2, Queries: 3, GoalAttributes: 1, GoalOptions: 1, Reward: RewardScore}},
		{"overrides win over the preset", map[string]string{"preset": "easy", "max_steps": "30", "catalogue_size": "1000", "queries": "5"},
			Config{Preset: PresetEasy, MaxSteps: 30, CatalogueSize: 1000, Goals: 6500, NearDuplicates: 2, Queries: 5, GoalAttributes: 1, GoalOptions: 1, Reward: RewardScore}},
		{"every key", map[string]string{"goals": "600", "near_duplicates": "1", "goal_attributes": "1", "goal_options": "1", "reward": "success"},
			Config{Preset: PresetStandard, MaxSteps: 15, CatalogueSize: 2000, Goals: 600, NearDuplicates: 1, Queries: 5, GoalAttributes: 1, GoalOptions: 1, Reward: RewardSuccess}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseOptions(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("ParseOptions(%v) = %+v, want %+v", tt.opts, got, tt.want)
			}
		})
	}
}

func TestParseOptionsErrors(t *testing.T) {
	tests := []struct {
		name string
		opts map[string]string
		want []string // every problem must be named
	}{
		{"unknown key", map[string]string{"colour": "red"}, []string{"colour", "unknown option", "max_steps"}},
		{"not a number", map[string]string{"max_steps": "many"}, []string{"max_steps", `"many" is not an integer`}},
		{"unknown preset", map[string]string{"preset": "hard"}, []string{`unknown preset "hard"`, "easy", "standard"}},
		{"unknown reward", map[string]string{"reward": "won"}, []string{"reward", `unknown reward "won"`, "score", "success"}},
		{"empty reward", map[string]string{"reward": ""}, []string{"reward", "an empty value"}},
		{"empty preset", map[string]string{"preset": ""}, []string{"preset", "an empty value"}},
		{"step limit below the expert path", map[string]string{"max_steps": "8"}, []string{"max_steps", "got 8, want 9..1000"}},
		{"catalogue too small", map[string]string{"catalogue_size": "100"}, []string{"catalogue_size", "got 100, want 144.."}},
		{"no train goals", map[string]string{"goals": "500"}, []string{"goals", "got 500, want 501.."}},
		{"several problems at once", map[string]string{"queries": "9", "goal_options": "3", "near_duplicates": "11"},
			[]string{"queries", "got 9, want 1..5", "near_duplicates", "got 11, want 1..10", "goal_options", "got 3, want 1..2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseOptions(tt.opts)
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("ParseOptions(%v): got %v, want an ErrConfig", tt.opts, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestRegistry(t *testing.T) {
	env, err := envs.New(Name, map[string]string{"preset": PresetEasy})
	if err != nil {
		t.Fatal(err)
	}
	if got := env.(*Env).Config().NearDuplicates; got != 2 {
		t.Errorf("easy preset through the registry: near_duplicates %d, want 2", got)
	}
	if _, err := envs.New(Name, map[string]string{"max_step": "10"}); !errors.Is(err, ErrConfig) {
		t.Errorf("misspelt option through the registry: got %v, want ErrConfig", err)
	}
}

func TestTasks(t *testing.T) {
	env, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		split     string
		n         int
		seed      int64
		wantLen   int
		wantFirst string
	}{
		{"all eval", envs.SplitEval, 0, 0, 500, "shop/eval/0"},
		{"eval prefix ignores the seed", envs.SplitEval, 3, 99, 3, "shop/eval/0"},
		{"eval capped", envs.SplitEval, 900, 0, 500, "shop/eval/0"},
		{"all train", envs.SplitTrain, 0, 0, 6000, "shop/train/500"},
		{"more train than goals", envs.SplitTrain, 6100, 5, 6100, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tasks, err := env.Tasks(tt.split, tt.n, tt.seed)
			if err != nil {
				t.Fatal(err)
			}
			if len(tasks) != tt.wantLen || (tt.wantFirst != "" && tasks[0].ID != tt.wantFirst) {
				t.Errorf("got %d tasks starting %s, want %d starting %s", len(tasks), tasks[0].ID, tt.wantLen, tt.wantFirst)
			}
			for _, task := range tasks {
				if (task.Seed < EvalGoals) != (tt.split == envs.SplitEval) {
					t.Fatalf("task %s (goal %d) in split %s", task.ID, task.Seed, tt.split)
				}
			}
		})
	}
	if _, err := env.Tasks("test", 1, 0); !errors.Is(err, envs.ErrUnknownSplit) {
		t.Errorf("unknown split: got %v, want ErrUnknownSplit", err)
	}
}

// TestTaskTypeMix: the eval split covers every category, none with less
// than a tenth of the goals.
func TestTaskTypeMix(t *testing.T) {
	env, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := env.Tasks(envs.SplitEval, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	mix := map[string]int{}
	for _, task := range tasks {
		mix[task.Type]++
	}
	for _, ty := range env.TaskTypes() {
		if mix[ty] < len(tasks)/10 {
			t.Errorf("type %s: %d of %d eval tasks, want at least a tenth", ty, mix[ty], len(tasks))
		}
	}
	t.Logf("eval task-type mix: %v", mix)
}

// TestSourceOptionsCarryTheReward: the PRM's source runs are paid as the
// target is; the default reward adds no key, so their run names (a hash of
// these options) stay those recorded before the option existed.
func TestSourceOptionsCarryTheReward(t *testing.T) {
	for _, tt := range []struct {
		reward string
		want   string
		has    bool
	}{{RewardScore, "", false}, {RewardSuccess, RewardSuccess, true}} {
		env, err := New(Config{Reward: tt.reward})
		if err != nil {
			t.Fatal(err)
		}
		got, has := env.SourceOptions()["reward"]
		if got != tt.want || has != tt.has {
			t.Errorf("reward %s: source option reward %q (present %v), want %q (%v)", tt.reward, got, has, tt.want, tt.has)
		}
	}
}
