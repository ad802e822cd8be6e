package swappertest

import (
	"fmt"

	"github.com/rspo-dev/rspo/envs"
)

// CounterEnv names a tiny deterministic environment for the tests,
// registered when this package is imported: the agent
// moves a counter with "inc"/"dec" and ends the episode with "stop"; it
// succeeds when the counter equals the task's target (Seed mod 5). The
// episode also ends after CounterLimit actions, with outcome 0.
const (
	CounterEnv   = "swapper-test-counter"
	CounterLimit = 8
)

func init() {
	envs.Register(CounterEnv, func(map[string]string) (envs.Env, error) { return counterEnv{}, nil })
}

type counterEnv struct{}

func (counterEnv) Name() string        { return CounterEnv }
func (counterEnv) Splits() []string    { return []string{envs.SplitTrain} }
func (counterEnv) TaskTypes() []string { return []string{"count"} }
func (counterEnv) Reset(t envs.Task) (envs.Episode, error) {
	if t.Split != envs.SplitTrain {
		return nil, fmt.Errorf("%w %q", envs.ErrUnknownSplit, t.Split)
	}
	return &counterEpisode{task: t, target: int(t.Seed % 5)}, nil
}

func (counterEnv) Tasks(split string, n int, seed int64) ([]envs.Task, error) {
	ts := make([]envs.Task, n)
	for i := range ts {
		ts[i] = envs.Task{ID: fmt.Sprintf("count/%d", seed+int64(i)), Type: "count", Split: split, Seed: seed + int64(i)}
	}
	return ts, nil
}

type counterEpisode struct {
	task          envs.Task
	target, value int
	steps         int
	done, success bool
}

func (e *counterEpisode) Task() envs.Task      { return e.task }
func (e *counterEpisode) Observation() string  { return fmt.Sprintf("counter %d", e.value) }
func (e *counterEpisode) Admissible() []string { return []string{"inc", "dec", "stop"} }
func (e *counterEpisode) Done() bool           { return e.done }
func (e *counterEpisode) Success() bool        { return e.success }
func (e *counterEpisode) Steps() int           { return e.steps }
func (e *counterEpisode) StateKey() uint64     { return uint64(e.value + 100) }
func (e *counterEpisode) Outcome() float64 {
	if e.success {
		return 1
	}
	return 0
}

func (e *counterEpisode) Step(action string) (envs.StepResult, error) {
	if e.done {
		return envs.StepResult{}, envs.ErrEpisodeDone
	}
	e.steps++
	ok := true
	switch action {
	case "inc":
		e.value++
	case "dec":
		e.value--
	case "stop":
		e.done, e.success = true, e.value == e.target
	default:
		ok = false
	}
	if e.steps >= CounterLimit {
		e.done = true
	}
	return envs.StepResult{Observation: e.Observation(), Reward: e.Outcome(), Done: e.done, Admissible: ok}, nil
}
