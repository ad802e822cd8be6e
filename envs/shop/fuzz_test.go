package shop

import (
	"errors"
	"testing"

	"github.com/rspo-dev/rspo/envs"
)

// FuzzStep drives an episode with a script of bytes: most bytes pick an
// admissible action, some send the fuzzed string or a mangled admissible
// action. Whatever arrives, Step must not panic or fail while the episode
// runs, must report admissibility exactly, must leave the state alone on a
// wasted step, and must end by the step limit with an outcome in [0, 1].
// The seed corpus is under testdata/fuzz/FuzzStep.
func FuzzStep(f *testing.F) {
	env, err := New(Config{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, goalIndex uint16, script []byte, raw string) {
		ep := fuzzEpisode(t, env, int(goalIndex)%env.cfg.Goals)
		for _, b := range script {
			if ep.Done() {
				break
			}
			fuzzStep(t, ep, fuzzAction(ep, b, raw))
		}
		if ep.Steps() > env.cfg.MaxSteps {
			t.Fatalf("%d steps, beyond the limit %d", ep.Steps(), env.cfg.MaxSteps)
		}
		if o := ep.Outcome(); o < 0 || o > 1 || (ep.Success() && o != 1) {
			t.Fatalf("outcome %v, success %v", o, ep.Success())
		}
		if ep.Done() {
			if _, err := ep.Step(raw); !errors.Is(err, envs.ErrEpisodeDone) {
				t.Fatalf("Step after the end: got %v, want ErrEpisodeDone", err)
			}
		}
	})
}

// fuzzEpisode resets goal i.
func fuzzEpisode(t *testing.T, env *Env, i int) *Episode {
	task, err := env.task(i)
	if err != nil {
		t.Fatal(err)
	}
	ep, err := env.Reset(task)
	if err != nil {
		t.Fatal(err)
	}
	return ep.(*Episode)
}

// fuzzAction turns one script byte into an action string.
func fuzzAction(ep *Episode, b byte, raw string) string {
	acts := ep.Admissible()
	a := acts[int(b)%len(acts)]
	switch {
	case b < 200:
		return a
	case b < 220:
		return raw
	case b < 235:
		return a[:len(a)-1]
	default:
		return a + raw
	}
}

// fuzzStep takes action and checks the contract of one step.
func fuzzStep(t *testing.T, ep *Episode, action string) {
	admissible := ep.find(action) >= 0
	key, steps := ep.StateKey(), ep.Steps()
	res, err := ep.Step(action)
	if err != nil {
		t.Fatalf("Step(%q): %v", action, err)
	}
	if res.Admissible != admissible {
		t.Fatalf("Step(%q): admissible %v, want %v", action, res.Admissible, admissible)
	}
	if !admissible && ep.StateKey() != key {
		t.Fatalf("wasted step %q changed the state", action)
	}
	if ep.Steps() != steps+1 || res.Observation == "" || (!res.Done && len(ep.Admissible()) == 0) {
		t.Fatalf("Step(%q): steps %d→%d, observation %q, admissible %q", action, steps, ep.Steps(), res.Observation, ep.Admissible())
	}
}
