package envtest

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/rspo-dev/rspo/envs"
)

// toy is a tiny environment for testing the suite: move a counter to a
// target value and submit. Its bug field switches on one contract violation.
type toy struct{ bug string }

var _ envs.Planner = (*toy)(nil)

const toyLimit = 12

func (e *toy) Name() string        { return "toy" }
func (e *toy) Splits() []string    { return []string{envs.SplitTrain, envs.SplitEval} }
func (e *toy) TaskTypes() []string { return []string{"count"} }

func (e *toy) Tasks(split string, n int, seed int64) ([]envs.Task, error) {
	switch split {
	case envs.SplitTrain:
	case envs.SplitEval:
		if n <= 0 || n > 6 {
			n = 6
		}
		seed = 1000
	default:
		return nil, fmt.Errorf("%w %q", envs.ErrUnknownSplit, split)
	}
	tasks := make([]envs.Task, n)
	for i := range tasks {
		s := seed*31 + int64(i)
		tasks[i] = envs.Task{
			ID: "toy/" + split + "/" + strconv.FormatInt(s, 10), Type: "count", Split: split, Seed: s,
			Instruction: "reach " + strconv.FormatInt(1+(s&0x7fffffff)%5, 10),
		}
	}
	return tasks, nil
}

var toyShared int // used by the "shared" and "nondeterministic" bugs

func (e *toy) Reset(task envs.Task) (envs.Episode, error) {
	if task.Split == "" {
		return nil, errors.New("toy: no split")
	}
	ep := &toyEp{env: e, task: task, target: 1 + int(task.Seed&0x7fffffff)%5}
	if e.bug == "nondeterministic" {
		toyShared++
		ep.value = toyShared % 2
	}
	ep.build()
	return ep, nil
}

func (e *toy) ExpertAction(ep envs.Episode) (string, error) {
	t := ep.(*toyEp)
	switch {
	case t.value < t.target:
		return "inc", nil
	case t.value > t.target:
		return "dec", nil
	case e.bug == "expert":
		return "dec", nil
	}
	return "submit", nil
}

type toyEp struct {
	env                  *toy
	task                 envs.Task
	value, target, steps int
	done, success        bool
	obs                  string
	acts                 []string
}

func (t *toyEp) build() {
	t.acts = t.acts[:0]
	if t.value < 9 {
		t.acts = append(t.acts, "inc")
	}
	if t.value > 0 {
		t.acts = append(t.acts, "dec")
	}
	t.acts = append(t.acts, "submit", "look")
	if t.env.bug == "duplicate" {
		t.acts = append(t.acts, "look")
	}
	t.obs = "value " + strconv.Itoa(t.value)
}

func (t *toyEp) Task() envs.Task      { return t.task }
func (t *toyEp) Observation() string  { return t.obs }
func (t *toyEp) Admissible() []string { return t.acts }
func (t *toyEp) Done() bool           { return t.done }
func (t *toyEp) Steps() int           { return t.steps }
func (t *toyEp) Success() bool        { return t.success }

// Bounds declares what the toy pays: success 1, failure 0. The "bounds"
// bug declares a score range its failures fall outside of.
func (e *toy) Bounds() envs.Bounds {
	b := envs.Bounds{Reward: envs.Range{Min: 0, Max: 1}, Score: envs.Range{Min: 0, Max: 1}, TwoValued: true, SuccessPaysMax: true}
	if e.bug == "bounds" {
		b.Score.Min = 0.5
	}
	return b
}

func (t *toyEp) Outcome() float64 {
	if t.success {
		return 1
	}
	return 0
}

func (t *toyEp) StateKey() uint64 {
	if t.env.bug == "key" {
		return 7
	}
	return uint64(t.value)<<32 | uint64(t.target)
}

func (t *toyEp) Step(a string) (envs.StepResult, error) {
	if t.done && t.env.bug != "afterdone" {
		return envs.StepResult{}, envs.ErrEpisodeDone
	}
	if a == "" && t.env.bug == "panic" {
		panic("empty action")
	}
	if t.env.bug != "nowaste" {
		t.steps++
	}
	res := envs.StepResult{Admissible: contains(t.acts, a)}
	switch {
	case !res.Admissible:
		t.obs = "Nothing happens."
		if t.env.bug == "wastechanges" {
			t.value = 9
		}
	case a == "inc":
		t.value++
	case a == "dec":
		t.value--
	case a == "submit":
		t.done, t.success = true, t.value == t.target
	}
	if res.Admissible {
		t.build()
	}
	if a == "look" && t.env.bug == "nothing" {
		t.obs = "Nothing happens."
	}
	if t.steps >= toyLimit && t.env.bug != "nolimit" {
		t.done = true
	}
	res.Observation, res.Done = t.obs, t.done
	if t.done {
		res.Reward = t.Outcome()
	}
	return res, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
