package household

import (
	"math/rand/v2"
	"testing"

	"github.com/rspo-dev/rspo/envs"
)

// TestIncrementalKeyMatchesFullKey walks randomly and recomputes the key
// from scratch after every step.
func TestIncrementalKeyMatchesFullKey(t *testing.T) {
	env, _ := New(DefaultConfig())
	tasks, _ := env.Tasks(envs.SplitTrain, 40, 3)
	rng := rand.New(rand.NewPCG(3, 3))
	for _, task := range tasks {
		ep, _ := env.Reset(task)
		e := ep.(*episode)
		for !e.Done() {
			acts := e.Admissible()
			if _, err := e.Step(acts[rng.IntN(len(acts))]); err != nil {
				t.Fatal(err)
			}
			if got, want := e.StateKey(), e.fullKey(); got != want {
				t.Fatalf("task %s step %d: incremental key %x, full key %x", task.ID, e.Steps(), got, want)
			}
		}
	}
}

func TestStateKeyIdentifiesStates(t *testing.T) {
	key := func(actions ...string) uint64 {
		ep := handEpisode(specs(pickAndPlace), 50)
		for _, a := range actions {
			if res, err := ep.Step(a); err != nil || !res.Admissible {
				t.Fatalf("%q: admissible %v, error %v", a, res.Admissible, err)
			}
		}
		return ep.StateKey()
	}
	tests := []struct {
		name  string
		a, b  []string
		equal bool
	}{
		{"path to a place does not matter", []string{"go to desk 1", "go to sinkbasin 1"}, []string{"go to sinkbasin 1"}, true},
		{"looking changes nothing", []string{"look", "inventory", "go to desk 1", "examine desk 1"}, []string{"go to desk 1"}, true},
		{"open then close", []string{"go to fridge 1", "open fridge 1", "close fridge 1"}, []string{"go to fridge 1"}, true},
		{"take and put back", []string{"go to countertop 1", "take apple 1 from countertop 1", "move apple 1 to countertop 1"}, []string{"go to countertop 1"}, true},
		{"lamp on and off", []string{"go to desk 1", "use desklamp 1", "use desklamp 1"}, []string{"go to desk 1"}, true},
		{"position", []string{"go to desk 1"}, []string{"go to sinkbasin 1"}, false},
		{"open", []string{"go to fridge 1", "open fridge 1"}, []string{"go to fridge 1"}, false},
		{"holding", []string{"go to countertop 1", "take apple 1 from countertop 1"}, []string{"go to countertop 1"}, false},
		{"lamp", []string{"go to desk 1", "use desklamp 1"}, []string{"go to desk 1"}, false},
		{"object place", []string{"go to countertop 1", "take apple 1 from countertop 1", "go to sinkbasin 1", "move apple 1 to sinkbasin 1"},
			[]string{"go to sinkbasin 1"}, false},
		{"object state", []string{"go to sinkbasin 1", "take mug 1 from sinkbasin 1", "clean mug 1 with sinkbasin 1"},
			[]string{"go to sinkbasin 1", "take mug 1 from sinkbasin 1"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := key(tt.a...), key(tt.b...)
			if (a == b) != tt.equal {
				t.Errorf("keys %x and %x: got equal %v, want %v", a, b, a == b, tt.equal)
			}
		})
	}
}
