package household

import (
	"github.com/rspo-dev/rspo/envs"
)

// nothingHappens is ALFWorld's answer to an action that is not admissible.
const nothingHappens = "Nothing happens."

// episode is one run of a household task: the immutable world plus the
// mutable state, the current admissible actions and the last observation.
type episode struct {
	w        *world
	task     envs.Task
	maxSteps int

	// State. Every mutation goes through the setters in statekey.go, which
	// keep key up to date.
	at    int16 // receptacle the agent is at, or -1 in the middle of the room
	hand  int16 // object held, or -1
	objAt []int16
	flags []uint8
	open  []bool
	key   uint64
	base  uint64 // seeds the state key's Zobrist values

	steps         int
	done, success bool
	obs           string

	acts  []string
	cmds  []command
	buf   []byte
	pairs map[uint32]string // cached "take x from y" and the like
}

var _ envs.Episode = (*episode)(nil)

// newEpisode starts an episode of task in world w.
func newEpisode(w *world, task envs.Task, maxSteps int) *episode {
	e := &episode{
		w: w, task: task, maxSteps: maxSteps,
		at: -1, hand: -1,
		objAt: append([]int16(nil), w.startAt...),
		flags: make([]uint8, len(w.objs)),
		open:  append([]bool(nil), w.startOpn...),
		obs:   w.welcome,
		acts:  make([]string, 0, len(w.receps)+16),
		cmds:  make([]command, 0, len(w.receps)+16),
		buf:   make([]byte, 0, 256),
		pairs: make(map[uint32]string, 16),
	}
	e.base = mix64(uint64(task.Seed) ^ mix64(streamKey<<8|uint64(w.spec.typ)) ^ uint64(len(w.receps))<<32 ^ uint64(len(w.objs)))
	e.key = e.fullKey()
	e.buildAdmissible()
	return e
}

// Task returns the task this episode solves.
func (e *episode) Task() envs.Task { return e.task }

// Observation returns the text of the last step (the welcome text at first).
func (e *episode) Observation() string { return e.obs }

// Admissible returns the actions valid now; empty once the episode is done.
func (e *episode) Admissible() []string { return e.acts }

// Done reports whether the episode has ended.
func (e *episode) Done() bool { return e.done }

// Success reports whether the goal held when the episode ended.
func (e *episode) Success() bool { return e.success }

// Steps returns the number of actions taken.
func (e *episode) Steps() int { return e.steps }

// StateKey identifies the world state: agent position, held object, every
// object's place and state, and which receptacles are open.
func (e *episode) StateKey() uint64 { return e.key }

// Outcome is 1 if the task was completed, else 0.
func (e *episode) Outcome() float64 {
	if e.success {
		return 1
	}
	return 0
}

// Step applies one action. An action not in the admissible list wastes the
// step and answers "Nothing happens.". The episode ends when the goal holds
// or after MaxSteps actions. Stepping a finished episode returns
// envs.ErrEpisodeDone.
func (e *episode) Step(action string) (envs.StepResult, error) {
	if e.done {
		return envs.StepResult{}, envs.ErrEpisodeDone
	}
	e.steps++
	i := e.find(action)
	if i >= 0 {
		e.obs = e.apply(e.cmds[i])
		e.success = e.goalHolds()
	} else {
		e.obs = nothingHappens
	}
	e.done = e.success || e.steps >= e.maxSteps
	switch {
	case e.done:
		e.acts, e.cmds = e.acts[:0], e.cmds[:0]
	case i >= 0:
		e.buildAdmissible()
	}
	res := envs.StepResult{Observation: e.obs, Done: e.done, Admissible: i >= 0}
	if e.done {
		res.Reward = e.Outcome()
	}
	return res, nil
}

// find returns the index of action in the admissible list, or -1.
func (e *episode) find(action string) int {
	for i, a := range e.acts {
		if a == action {
			return i
		}
	}
	return -1
}
