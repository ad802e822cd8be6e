package policy

import (
	"fmt"

	"github.com/rspo-dev/rspo/schemas"
)

// Turn is one earlier turn of an episode: what the agent saw and what it did.
type Turn struct {
	Observation string
	Action      string
}

// State is everything the policy reads to choose an action.
type State struct {
	// Instruction is the task's goal text.
	Instruction string
	// Observation is the current observation text.
	Observation string
	// History holds every earlier turn of the episode, oldest first. The
	// n-gram features read the last Config.History of them; the match flags
	// (visited, repeated) read them all.
	History []Turn
	// Admissible lists the actions to choose from; it must not be empty.
	Admissible []string
}

// StatesFromTrajectory rebuilds the state of every step of t, so that a
// learner can recompute the policy's distribution on any stored trajectory.
// The states share one history array; they must not be modified. It
// returns a TrajectoryError when a step has no admissible list or its
// ActionIndex does not point at its Action.
func StatesFromTrajectory(t *schemas.Trajectory) ([]State, error) {
	states := make([]State, len(t.Steps))
	turns := make([]Turn, len(t.Steps))
	for i := range t.Steps {
		st := &t.Steps[i]
		if err := checkStep(t.ID, i, st); err != nil {
			return nil, err
		}
		turns[i] = Turn{Observation: st.Observation, Action: st.Action}
		states[i] = State{
			Instruction: t.Instruction,
			Observation: st.Observation,
			History:     turns[:i:i],
			Admissible:  st.Admissible,
		}
	}
	return states, nil
}

func checkStep(id string, i int, st *schemas.Step) error {
	n := len(st.Admissible)
	switch {
	case n == 0:
		return &TrajectoryError{ID: id, Step: i, Reason: "no admissible actions recorded"}
	case st.ActionIndex < 0 || int(st.ActionIndex) >= n:
		return &TrajectoryError{ID: id, Step: i, Reason: fmt.Sprintf("action index %d not in 0..%d", st.ActionIndex, n-1)}
	case st.Admissible[st.ActionIndex] != st.Action:
		return &TrajectoryError{ID: id, Step: i, Reason: fmt.Sprintf("admissible[%d] is %q, action is %q", st.ActionIndex, st.Admissible[st.ActionIndex], st.Action)}
	}
	return nil
}
