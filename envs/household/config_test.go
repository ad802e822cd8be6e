package household

import (
	"errors"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/envs"
)

func TestConfigFromOptions(t *testing.T) {
	tests := []struct {
		name  string
		opts  map[string]string
		check func(Config) bool
	}{
		{"nil is the alfworld preset", nil, func(c Config) bool { return c == DefaultConfig() && c.Preset == PresetALFWorld }},
		{"easy preset", map[string]string{"preset": "easy"}, func(c Config) bool { return c == presets[PresetEasy] }},
		{"max_steps override", map[string]string{"preset": "hard", "max_steps": "80"}, func(c Config) bool {
			return c.MaxSteps == 80 && c.MinReceptacles == 30
		}},
		{"receptacle range", map[string]string{"receptacles": "10-12"}, func(c Config) bool {
			return c.MinReceptacles == 10 && c.MaxReceptacles == 12
		}},
		{"single receptacle count", map[string]string{"receptacles": "25"}, func(c Config) bool {
			return c.MinReceptacles == 25 && c.MaxReceptacles == 25
		}},
		{"closed and objects", map[string]string{"closed": "0.25", "objects": "2"}, func(c Config) bool {
			return c.Closed == 0.25 && c.ObjectsPerReceptacle == 2
		}},
		{"task types equal weights", map[string]string{"task_types": "pick_and_place, pick_heat_then_place"}, func(c Config) bool {
			return c.TaskMix == [numTypes]float64{pickAndPlace: 1, pickHeatThenPlace: 1}
		}},
		{"task types with weights", map[string]string{"task_types": "look_at_obj_in_light=3,pick_two_and_place=0.5"}, func(c Config) bool {
			return c.TaskMix == [numTypes]float64{lookAtObjInLight: 3, pickTwoAndPlace: 0.5}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ConfigFromOptions(tt.opts)
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			if !tt.check(c) {
				t.Errorf("got %+v, which does not match the options %v", c, tt.opts)
			}
		})
	}
}

func TestConfigFromOptionsErrors(t *testing.T) {
	tests := []struct {
		name string
		opts map[string]string
		want string // a fragment the error must contain
	}{
		{"unknown preset", map[string]string{"preset": "nightmare"}, `unknown preset "nightmare"`},
		{"unknown key", map[string]string{"steps": "3"}, `unknown option "steps"`},
		{"max_steps not a number", map[string]string{"max_steps": "many"}, "want an integer"},
		{"max_steps zero", map[string]string{"max_steps": "0"}, "max_steps 0"},
		{"receptacles garbage", map[string]string{"receptacles": "a-b"}, `want "N" or "MIN-MAX"`},
		{"receptacles reversed", map[string]string{"receptacles": "20-10"}, "receptacles 20-10"},
		{"receptacles too many", map[string]string{"receptacles": "10-99"}, "max ≤ 40"},
		{"receptacles too few", map[string]string{"receptacles": "2"}, "4 ≤ min"},
		{"closed out of range", map[string]string{"closed": "1.5"}, "closed 1.5"},
		{"closed NaN", map[string]string{"closed": "NaN"}, "closed NaN"},
		{"objects zero", map[string]string{"objects": "0"}, "objects per receptacle 0"},
		{"unknown task type", map[string]string{"task_types": "pick_and_dance"}, `unknown task type "pick_and_dance"`},
		{"negative weight", map[string]string{"task_types": "pick_and_place=-1"}, "want a number ≥ 0"},
		{"all weights zero", map[string]string{"task_types": "pick_and_place=0"}, "no positive weight"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ConfigFromOptions(tt.opts)
			if err == nil {
				t.Fatalf("got no error, want one containing %q", tt.want)
			}
			if !errors.Is(err, ErrConfig) {
				t.Errorf("got %v, want an error wrapping ErrConfig", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	err := Config{MinReceptacles: 9, MaxReceptacles: 3, Closed: -1, MaxSteps: 0}.Validate()
	for _, want := range []string{"receptacles", "closed", "objects", "task mix", "max_steps"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want a problem about %s", err, want)
		}
	}
}

func TestRegistered(t *testing.T) {
	env, err := envs.New(Name, map[string]string{"preset": "easy"})
	if err != nil {
		t.Fatal(err)
	}
	if got := env.(*Env).Config(); got != presets[PresetEasy] {
		t.Errorf("got config %+v, want the easy preset", got)
	}
	if _, err := envs.New(Name, map[string]string{"bogus": "1"}); !errors.Is(err, ErrConfig) {
		t.Errorf("got %v, want ErrConfig", err)
	}
}

func TestPresetsGrowHarder(t *testing.T) {
	prev := Config{}
	for _, name := range Presets() {
		c, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("preset %s: %v", name, err)
		}
		if c.MinReceptacles < prev.MinReceptacles || c.Closed < prev.Closed || c.MaxSteps < prev.MaxSteps {
			t.Errorf("preset %s (%+v) is not at least as large as the one before (%+v)", name, c, prev)
		}
		prev = c
	}
}
