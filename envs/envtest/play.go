package envtest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/rspo-dev/rspo/envs"
)

// notAnAction is a string no environment should list as admissible.
const notAnAction = "xyzzy: this is not an action"

// record is everything observable about one step, for exact comparisons.
type record struct {
	Action      string
	Observation string
	Reward      float64
	Done        bool
	Admissible  bool
	Steps       int
	StateKey    uint64
	Actions     string // the admissible list after the step, joined
}

// sampleTasks returns up to n tasks spread over every split, deterministic
// in cfg.Seed.
func sampleTasks(env envs.Env, cfg Config, n int) ([]envs.Task, error) {
	var out []envs.Task
	splits := env.Splits()
	per := max(1, (n+len(splits)-1)/len(splits))
	for _, split := range splits {
		tasks, err := env.Tasks(split, per, cfg.Seed)
		if err != nil {
			return nil, fmt.Errorf("Tasks(%q, %d, %d): %w", split, per, cfg.Seed, err)
		}
		out = append(out, tasks...)
	}
	if len(out) == 0 {
		return nil, errors.New("no tasks in any split")
	}
	if len(out) > n {
		out = out[:n]
	}
	return out, nil
}

// chooseAction picks a uniformly random admissible action, or notAnAction
// with probability 1/8.
func chooseAction(ep envs.Episode, rng *rand.Rand) string {
	acts := ep.Admissible()
	if len(acts) == 0 || rng.IntN(8) == 0 {
		return notAnAction
	}
	return acts[rng.IntN(len(acts))]
}

// playRandom runs ep to the end with chooseAction, recording every step.
// It fails if the episode exceeds limit steps.
func playRandom(ep envs.Episode, rng *rand.Rand, limit int) ([]record, error) {
	var recs []record
	for !ep.Done() {
		if ep.Steps() >= limit {
			return recs, fmt.Errorf("task %s: episode still running after %d steps", ep.Task().ID, ep.Steps())
		}
		a := chooseAction(ep, rng)
		res, err := ep.Step(a)
		if err != nil {
			return recs, fmt.Errorf("task %s: Step(%q) at step %d: %w", ep.Task().ID, a, ep.Steps(), err)
		}
		recs = append(recs, snapshot(ep, a, res))
	}
	return recs, nil
}

// snapshot records the result of one step and the episode's state after it.
func snapshot(ep envs.Episode, action string, res envs.StepResult) record {
	return record{
		Action:      action,
		Observation: res.Observation,
		Reward:      res.Reward,
		Done:        res.Done,
		Admissible:  res.Admissible,
		Steps:       ep.Steps(),
		StateKey:    ep.StateKey(),
		Actions:     strings.Join(ep.Admissible(), "\n"),
	}
}

// diffRecords describes the first difference between two transcripts.
func diffRecords(a, b []record) error {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Errorf("step %d differs:\n got %+v\nwant %+v", i+1, b[i], a[i])
		}
	}
	if len(a) != len(b) {
		return fmt.Errorf("transcripts differ in length: got %d steps, want %d", len(b), len(a))
	}
	return nil
}

// replay resets task and applies actions, failing on any error.
func replay(env envs.Env, task envs.Task, actions []string) (envs.Episode, error) {
	ep, err := env.Reset(task)
	if err != nil {
		return nil, fmt.Errorf("Reset(%s): %w", task.ID, err)
	}
	for i, a := range actions {
		if _, err := ep.Step(a); err != nil {
			return nil, fmt.Errorf("task %s: replaying step %d %q: %w", task.ID, i+1, a, err)
		}
	}
	return ep, nil
}

// duplicate returns the first string that occurs twice in list, if any.
func duplicate(list []string) (string, bool) {
	seen := make(map[string]bool, len(list))
	for _, s := range list {
		if seen[s] {
			return s, true
		}
		seen[s] = true
	}
	return "", false
}

// episodeRNG returns the random source of the i-th random episode.
func episodeRNG(cfg Config, i int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(i)+0x9e3779b9))
}

// copyActions snapshots an admissible list, which the episode may reuse.
func copyActions(ep envs.Episode) []string { return slices.Clone(ep.Admissible()) }
