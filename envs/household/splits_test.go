package household

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/envs"
)

func itoa(n int) string { return strconv.Itoa(n) }

// TestFixedSplitsAreStable pins the fixed evaluation lists: ids, types,
// seeds and instructions must never change.
func TestFixedSplitsAreStable(t *testing.T) {
	env, _ := New(DefaultConfig())
	for _, split := range []string{envs.SplitEvalIn, envs.SplitEvalOut} {
		t.Run(split, func(t *testing.T) {
			tasks, err := env.Tasks(split, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, task := range tasks {
				fmt.Fprintf(&b, "%s\t%s\t%d\t%s\n", task.ID, task.Type, task.Seed, task.Instruction)
			}
			golden(t, split+".golden", []byte(b.String()))
		})
	}
}

func TestFixedSplitMix(t *testing.T) {
	env, _ := New(DefaultConfig())
	tests := []struct {
		split string
		size  int
	}{{envs.SplitEvalIn, 140}, {envs.SplitEvalOut, 134}}
	for _, tt := range tests {
		t.Run(tt.split, func(t *testing.T) {
			tasks, err := env.Tasks(tt.split, 0, 99)
			if err != nil {
				t.Fatal(err)
			}
			if len(tasks) != tt.size {
				t.Fatalf("got %d tasks, want %d", len(tasks), tt.size)
			}
			got := map[string]int{}
			for _, task := range tasks {
				got[task.Type]++
			}
			for ty, want := range fixedMix[tt.split] {
				if got[typeNames[ty]] != want {
					t.Errorf("%s: got %d tasks, want %d", typeNames[ty], got[typeNames[ty]], want)
				}
			}
		})
	}
}

// TestOutOfDistributionCombinations checks that the (object, target) pairs
// of eval_out_of_distribution never occur in train or in-distribution tasks.
func TestOutOfDistributionCombinations(t *testing.T) {
	env, _ := New(DefaultConfig())
	combos := func(split string, n int) map[string]bool {
		tasks, err := env.Tasks(split, n, 5)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, task := range tasks {
			spec, err := specOf(task)
			if err != nil {
				t.Fatal(err)
			}
			out[comboKey(spec)] = true
		}
		return out
	}
	ood := combos(envs.SplitEvalOut, 0)
	for _, split := range []string{envs.SplitTrain, envs.SplitEvalIn} {
		for c := range combos(split, 3000) {
			if ood[c] {
				t.Errorf("combination %s occurs in both %s and %s", c, split, envs.SplitEvalOut)
			}
		}
	}
	for ty := range numTypes {
		if len(candidates[ty][0]) == 0 || len(candidates[ty][1]) == 0 {
			t.Errorf("%s: %d in-distribution and %d held-out combinations, want both > 0",
				typeNames[ty], len(candidates[ty][0]), len(candidates[ty][1]))
		}
	}
}

func comboKey(s taskSpec) string {
	if s.typ == lookAtObjInLight {
		return objKinds[s.obj].name + "/" + lampName
	}
	return objKinds[s.obj].name + "/" + recepKinds[s.target].name
}

func TestTrainTasks(t *testing.T) {
	env, _ := New(DefaultConfig())
	a, err := env.Tasks(envs.SplitTrain, 2000, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := env.Tasks(envs.SplitTrain, 10, 7)
	for i := range b {
		if a[i] != b[i] {
			t.Fatalf("task %d: got %+v with n=10, want %+v as with n=2000", i, b[i], a[i])
		}
	}
	counts := map[string]int{}
	for _, task := range a {
		counts[task.Type]++
		if want := "household/train/" + strconv.FormatInt(task.Seed, 10); task.ID != want {
			t.Errorf("got id %q, want %q", task.ID, want)
		}
	}
	// ALFWorld's train mix: pick_two is the most common type, look the rarest.
	if counts["pick_two_and_place"] <= counts["look_at_obj_in_light"] || counts["look_at_obj_in_light"] == 0 {
		t.Errorf("got type counts %v, want ALFWorld's train mix", counts)
	}
	easy, _ := New(presets[PresetEasy])
	tasks, _ := easy.Tasks(envs.SplitTrain, 200, 7)
	for _, task := range tasks {
		if task.Type != "pick_and_place" {
			t.Fatalf("easy preset generated a %s task, want only pick_and_place", task.Type)
		}
	}
}

func TestTasksErrors(t *testing.T) {
	env, _ := New(DefaultConfig())
	if _, err := env.Tasks("valid_seen", 1, 0); !errors.Is(err, envs.ErrUnknownSplit) {
		t.Errorf("unknown split: got %v, want ErrUnknownSplit", err)
	}
	if _, err := env.Tasks(envs.SplitTrain, 0, 0); !errors.Is(err, ErrTaskCount) {
		t.Errorf("zero train tasks: got %v, want ErrTaskCount", err)
	}
}

func TestResetRejectsForeignTasks(t *testing.T) {
	env, _ := New(DefaultConfig())
	tasks, _ := env.Tasks(envs.SplitEvalIn, 1, 0)
	good := tasks[0]
	tests := []struct {
		name string
		edit func(*envs.Task)
		want error
	}{
		{"unknown split", func(t *envs.Task) { t.Split = "valid_seen" }, envs.ErrUnknownSplit},
		{"unknown type", func(t *envs.Task) { t.Type = "pick_and_dance" }, ErrInvalidTask},
		{"instruction of another seed", func(t *envs.Task) { t.Seed++ }, ErrInvalidTask},
		{"edited instruction", func(t *envs.Task) { t.Instruction += " now" }, ErrInvalidTask},
		{"in-distribution task labelled out of distribution", func(t *envs.Task) { t.Split = envs.SplitEvalOut }, ErrInvalidTask},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task := good
			tt.edit(&task)
			if _, err := env.Reset(task); !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
}
