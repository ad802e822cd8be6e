package envtest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/rspo-dev/rspo/envs"
)

// checkStateKeys: fresh episodes of a task share a state key, and equal keys
// mean equal states — observed as equal admissible lists — across many
// random walks of the task. So a change of the admissible list always
// changes the key.
func checkStateKeys(env envs.Env, cfg Config) error {
	tasks, err := sampleTasks(env, cfg, cfg.Episodes)
	if err != nil {
		return err
	}
	for i, task := range tasks {
		a, errA := env.Reset(task)
		b, errB := env.Reset(task)
		if err := errors.Join(errA, errB); err != nil {
			return fmt.Errorf("Reset(%s): %w", task.ID, err)
		}
		if a.StateKey() != b.StateKey() {
			return fmt.Errorf("task %s: two fresh episodes have keys %x and %x", task.ID, a.StateKey(), b.StateKey())
		}
		if err := keysDetermineActions(env, task, cfg, i); err != nil {
			return err
		}
	}
	return nil
}

// keysDetermineActions walks task randomly several times and checks that a
// state key always comes with the same admissible list.
func keysDetermineActions(env envs.Env, task envs.Task, cfg Config, i int) error {
	seen := map[uint64]string{}
	for walk := range 4 {
		ep, err := env.Reset(task)
		if err != nil {
			return fmt.Errorf("Reset(%s): %w", task.ID, err)
		}
		rng := episodeRNG(cfg, 100*i+walk)
		for !ep.Done() && ep.Steps() < cfg.MaxEpisodeSteps {
			key, acts := ep.StateKey(), strings.Join(ep.Admissible(), "\n")
			if prev, ok := seen[key]; ok && prev != acts {
				return fmt.Errorf("task %s: state key %x seen with two admissible lists:\n%s\n---\n%s", task.ID, key, prev, acts)
			}
			seen[key] = acts
			if _, err := ep.Step(chooseAction(ep, rng)); err != nil {
				return fmt.Errorf("task %s: %w", task.ID, err)
			}
		}
	}
	return nil
}

// checkExpert: when the environment implements envs.Planner, its expert
// takes only admissible actions and solves every task it is given from each
// split, and solving changes the state key.
func checkExpert(env envs.Env, cfg Config) error {
	planner, ok := env.(envs.Planner)
	if !ok {
		return nil
	}
	var errs []error
	for _, split := range env.Splits() {
		n := cfg.ExpertTasks
		if n < 0 && split == envs.SplitTrain {
			n = 25
		}
		tasks, err := env.Tasks(split, max(n, 0), cfg.Seed)
		if err != nil {
			return fmt.Errorf("Tasks(%q): %w", split, err)
		}
		failed := 0
		for _, task := range tasks {
			if err := solve(env, planner, task, cfg.MaxEpisodeSteps); err != nil {
				if failed++; failed <= 3 {
					errs = append(errs, err)
				}
			}
		}
		if failed > 0 {
			errs = append(errs, fmt.Errorf("split %s: expert failed %d of %d tasks", split, failed, len(tasks)))
		}
	}
	return errors.Join(errs...)
}

// solve runs the expert on one task.
func solve(env envs.Env, planner envs.Planner, task envs.Task, limit int) error {
	ep, err := env.Reset(task)
	if err != nil {
		return fmt.Errorf("Reset(%s): %w", task.ID, err)
	}
	start := ep.StateKey()
	for !ep.Done() && ep.Steps() < limit {
		a, err := planner.ExpertAction(ep)
		if err != nil {
			return fmt.Errorf("task %s: ExpertAction at step %d: %w", task.ID, ep.Steps(), err)
		}
		if !slices.Contains(ep.Admissible(), a) {
			return fmt.Errorf("task %s: expert chose inadmissible %q at step %d", task.ID, a, ep.Steps())
		}
		if _, err := ep.Step(a); err != nil {
			return fmt.Errorf("task %s: %w", task.ID, err)
		}
	}
	switch {
	case !ep.Success():
		return fmt.Errorf("task %s (%s): expert did not solve it in %d steps: %q", task.ID, task.Type, ep.Steps(), task.Instruction)
	case ep.Outcome() <= 0:
		return fmt.Errorf("task %s: expert success with outcome %v", task.ID, ep.Outcome())
	case ep.StateKey() == start:
		return fmt.Errorf("task %s: solved, but the state key did not change", task.ID)
	}
	if b, ok := env.(envs.Bounded); ok { // the successes random play rarely reaches
		if err := b.Bounds().CheckOutcome(ep.Outcome(), ep.Success()); err != nil {
			return fmt.Errorf("task %s: expert's episode against the declared bounds: %w", task.ID, err)
		}
		if s := envs.Score(ep); !b.Bounds().Score.Contains(s) {
			return fmt.Errorf("task %s: expert's score %v outside the declared score range %v", task.ID, s, b.Bounds().Score)
		}
	}
	return nil
}

// checkRandomStrings: arbitrary action strings — mutated admissible actions,
// random bytes, invalid UTF-8, empty and very long strings — never panic,
// never error while the episode runs, and are admissible exactly when they
// appear in the admissible list.
func checkRandomStrings(env envs.Env, cfg Config) (err error) {
	tasks, err := sampleTasks(env, cfg, cfg.Episodes)
	if err != nil {
		return err
	}
	var action string
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic on action %q: %v", action, p)
		}
	}()
	for i, task := range tasks {
		ep, err := env.Reset(task)
		if err != nil {
			return fmt.Errorf("Reset(%s): %w", task.ID, err)
		}
		rng := episodeRNG(cfg, i)
		for !ep.Done() && ep.Steps() < cfg.MaxEpisodeSteps {
			acts := copyActions(ep)
			action = randomString(acts, rng)
			res, err := ep.Step(action)
			if err != nil {
				return fmt.Errorf("task %s: Step(%q): %w", task.ID, action, err)
			}
			if want := slices.Contains(acts, action); res.Admissible != want {
				return fmt.Errorf("task %s: Step(%q): Admissible = %v, want %v", task.ID, action, res.Admissible, want)
			}
		}
	}
	return nil
}

// randomString returns a string an agent might plausibly (or implausibly) send.
func randomString(acts []string, rng *rand.Rand) string {
	if len(acts) == 0 {
		return notAnAction
	}
	a := acts[rng.IntN(len(acts))]
	switch rng.IntN(10) {
	case 0:
		return a
	case 1:
		return a[:rng.IntN(len(a)+1)]
	case 2:
		return strings.ToUpper(a)
	case 3:
		return " " + a + "\n"
	case 4:
		return a + " " + acts[rng.IntN(len(acts))]
	case 5:
		return ""
	case 6:
		return strings.Repeat(a, 200)
	case 7:
		b := []byte(a + "?")
		b[rng.IntN(len(b))] = byte(rng.IntN(256))
		return string(b)
	case 8:
		return string([]byte{0xff, 0xfe, byte(rng.IntN(256))})
	default:
		r := make([]rune, rng.IntN(12))
		for j := range r {
			r[j] = rune(rng.IntN(utf8.MaxRune))
		}
		return string(r)
	}
}

// checkConcurrent: episodes played in parallel goroutines give the same
// transcripts as sequential ones, so an Env may serve many actors at once.
func checkConcurrent(env envs.Env, cfg Config) error {
	tasks, err := sampleTasks(env, cfg, cfg.Episodes)
	if err != nil {
		return err
	}
	want := make([][]record, len(tasks))
	for i, task := range tasks {
		if want[i], err = transcript(env, task, cfg, i); err != nil {
			return err
		}
	}
	got := make([][]record, len(tasks))
	errs := make([]error, len(tasks))
	var wg sync.WaitGroup
	for i, task := range tasks {
		wg.Go(func() { got[i], errs[i] = transcript(env, task, cfg, i) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for i := range tasks {
		if err := diffRecords(want[i], got[i]); err != nil {
			return fmt.Errorf("task %s played concurrently: %w", tasks[i].ID, err)
		}
	}
	return nil
}

// transcript plays the i-th random episode of task.
func transcript(env envs.Env, task envs.Task, cfg Config, i int) ([]record, error) {
	ep, err := env.Reset(task)
	if err != nil {
		return nil, fmt.Errorf("Reset(%s): %w", task.ID, err)
	}
	return playRandom(ep, episodeRNG(cfg, i), cfg.MaxEpisodeSteps)
}
