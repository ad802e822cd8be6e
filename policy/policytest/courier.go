// Package policytest provides a tiny multi-turn environment for testing
// policies and learners without the real environments: a courier who must
// find an object in one of a few rooms and bring it to a container in
// another. It speaks the household's kind of text ("go to room 2", "take
// coin 1 from room 2", "put coin 1 in/on chest 1"), so the policy's text
// features and match flags have something to grip, and a uniformly random
// agent succeeds only now and then.
package policytest

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"

	"github.com/rspo-dev/rspo/envs"
)

// Courier is the toy environment. It is not registered with envs.
type Courier struct {
	// Rooms is the number of rooms (default 5).
	Rooms int
	// StepLimit ends an unsolved episode (default 15).
	StepLimit int
}

var _ envs.Env = Courier{}

var (
	courierObjects = []string{"coin", "key", "gem", "apple", "book"}
	courierTargets = []string{"chest", "box", "basket"}
)

// Name implements envs.Env.
func (Courier) Name() string { return "courier" }

// Splits implements envs.Env.
func (Courier) Splits() []string { return []string{envs.SplitTrain, envs.SplitEvalIn} }

// TaskTypes implements envs.Env.
func (Courier) TaskTypes() []string { return []string{"deliver"} }

func (c Courier) rooms() int {
	if c.Rooms <= 0 {
		return 5
	}
	return c.Rooms
}

func (c Courier) limit() int {
	if c.StepLimit <= 0 {
		return 15
	}
	return c.StepLimit
}

// Tasks implements envs.Env: train tasks come from seed; the eval split is
// a fixed set of 50 tasks.
func (c Courier) Tasks(split string, n int, seed int64) ([]envs.Task, error) {
	base := int64(0)
	switch split {
	case envs.SplitTrain:
		base = seed * 1_000_003
	case envs.SplitEvalIn:
		base = -1
		if n <= 0 || n > 50 {
			n = 50
		}
	default:
		return nil, fmt.Errorf("%w %q", envs.ErrUnknownSplit, split)
	}
	tasks := make([]envs.Task, n)
	for i := range tasks {
		s := base*7919 + int64(i) + 1
		w := c.world(s)
		tasks[i] = envs.Task{
			ID: fmt.Sprintf("courier/%s/%d", split, i), Type: "deliver", Split: split, Seed: s,
			Instruction: fmt.Sprintf("bring the %s to the %s.", w.object, w.target),
		}
	}
	return tasks, nil
}

// world is the hidden layout of a task.
type world struct {
	object, target string
	contents       [][]string // per room: the items there ("coin 1", "chest 1")
}

func (c Courier) world(seed int64) world {
	rng := rand.New(rand.NewPCG(uint64(seed), 17))
	w := world{object: courierObjects[rng.IntN(len(courierObjects))], target: courierTargets[rng.IntN(len(courierTargets))]}
	w.contents = make([][]string, c.rooms())
	objRoom := rng.IntN(c.rooms())
	tgtRoom := (objRoom + 1 + rng.IntN(c.rooms()-1)) % c.rooms()
	w.contents[objRoom] = append(w.contents[objRoom], w.object+" 1")
	w.contents[tgtRoom] = append(w.contents[tgtRoom], w.target+" 1")
	for r := range w.contents {
		if o := courierObjects[rng.IntN(len(courierObjects))]; o != w.object && rng.IntN(2) == 0 {
			w.contents[r] = append(w.contents[r], o+" 2")
		}
		if t := courierTargets[rng.IntN(len(courierTargets))]; t != w.target && rng.IntN(2) == 0 {
			w.contents[r] = append(w.contents[r], t+" 2")
		}
	}
	return w
}

// Reset implements envs.Env.
func (c Courier) Reset(task envs.Task) (envs.Episode, error) {
	ep := &courierEpisode{task: task, w: c.world(task.Seed), limit: c.limit(), room: -1}
	ep.obs = fmt.Sprintf("You are in a hallway with %d rooms. Your task is to: %s", c.rooms(), task.Instruction)
	ep.refresh()
	return ep, nil
}

type courierEpisode struct {
	task    envs.Task
	w       world
	limit   int
	room    int // -1: hallway
	holding string
	steps   int
	done    bool
	success bool
	obs     string
	acts    []string
}

func (e *courierEpisode) Task() envs.Task      { return e.task }
func (e *courierEpisode) Observation() string  { return e.obs }
func (e *courierEpisode) Admissible() []string { return e.acts }
func (e *courierEpisode) Done() bool           { return e.done }
func (e *courierEpisode) Success() bool        { return e.success }
func (e *courierEpisode) Steps() int           { return e.steps }

func (e *courierEpisode) Outcome() float64 {
	if e.success {
		return 1
	}
	return 0
}

func (e *courierEpisode) StateKey() uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|%d|%s|%v", e.task.Seed, e.room, e.holding, e.done)
	return h.Sum64()
}

// refresh recomputes the admissible actions.
func (e *courierEpisode) refresh() {
	e.acts = e.acts[:0]
	for r := range e.w.contents {
		if r != e.room {
			e.acts = append(e.acts, fmt.Sprintf("go to room %d", r+1))
		}
	}
	if e.room >= 0 {
		for _, it := range e.w.contents[e.room] {
			switch {
			case e.holding == "" && isObject(it):
				e.acts = append(e.acts, fmt.Sprintf("take %s from room %d", it, e.room+1))
			case e.holding != "" && !isObject(it):
				e.acts = append(e.acts, fmt.Sprintf("put %s in/on %s", e.holding, it))
			}
		}
	}
	e.acts = append(e.acts, "look", "inventory")
}

func isObject(item string) bool {
	for _, o := range courierObjects {
		if strings.HasPrefix(item, o+" ") {
			return true
		}
	}
	return false
}

// Step implements envs.Episode.
func (e *courierEpisode) Step(action string) (envs.StepResult, error) {
	if e.done {
		return envs.StepResult{}, envs.ErrEpisodeDone
	}
	e.steps++
	admissible := false
	for _, a := range e.acts {
		admissible = admissible || a == action
	}
	if admissible {
		e.apply(action)
	} else {
		e.obs = "Nothing happens."
	}
	if e.steps >= e.limit {
		e.done = true
	}
	e.refresh()
	return envs.StepResult{Observation: e.obs, Reward: e.Outcome() * b2f(e.done), Done: e.done, Admissible: admissible}, nil
}

func (e *courierEpisode) apply(action string) {
	var r int
	var item, dest string
	switch {
	case action == "look":
		e.obs = e.describe()
	case action == "inventory":
		e.obs = "You carry nothing."
		if e.holding != "" {
			e.obs = "You carry a " + e.holding + "."
		}
	case scan(action, "go to room %d", &r):
		e.room = r - 1
		e.obs = e.describe()
	case strings.HasPrefix(action, "take "):
		item = strings.TrimPrefix(action[:strings.Index(action, " from ")], "take ")
		e.holding = item
		e.w.contents[e.room] = remove(e.w.contents[e.room], item)
		e.obs = fmt.Sprintf("You pick up the %s from room %d.", item, e.room+1)
	case strings.HasPrefix(action, "put "):
		dest = action[strings.Index(action, " in/on ")+7:]
		e.obs = fmt.Sprintf("You put the %s in/on the %s.", e.holding, dest)
		if e.holding == e.w.object+" 1" && dest == e.w.target+" 1" {
			e.success, e.done = true, true
		}
		e.holding = ""
	}
}

func (e *courierEpisode) describe() string {
	if e.room < 0 {
		return "You are in the hallway."
	}
	items := e.w.contents[e.room]
	if len(items) == 0 {
		return fmt.Sprintf("You arrive at room %d. In room %d, you see nothing.", e.room+1, e.room+1)
	}
	return fmt.Sprintf("You arrive at room %d. In room %d, you see a %s.", e.room+1, e.room+1, strings.Join(items, ", a "))
}

func scan(s, format string, v *int) bool {
	n, err := fmt.Sscanf(s, format, v)
	return err == nil && n == 1
}

func remove(list []string, item string) []string {
	out := list[:0:0]
	for _, x := range list {
		if x != item {
			out = append(out, x)
		}
	}
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
