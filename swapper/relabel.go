package swapper

import (
	"fmt"

	"github.com/rspo-dev/rspo/schemas"
)

// Relabel returns the buffer record of an explorer trajectory: a copy of t
// with the reward swapped. t is not modified.
//
//   - Step.Reward becomes the environment's reward: 0 on every step but the
//     last, which carries OutcomeReward. The learner trains on it.
//   - Step.DenseReward keeps the PRM's label as provenance. Before the swap
//     the label is in both fields; if a producer filled only Reward, its
//     value is moved to DenseReward so that nothing is lost.
//   - Swapped is set, and DistinctStates and RepeatedVisits (the buffer's
//     priority keys) are computed from the steps' state keys.
//   - Behaviour log-probs, actions and everything else are kept as they are.
//
// It returns a *schemas.ValidationError (schemas.ErrInvalid) for an invalid
// trajectory, ErrNotExplore for an on-policy one and ErrAlreadySwapped for
// one that was relabelled before.
func Relabel(t *schemas.Trajectory) (*schemas.Trajectory, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	if t.Source != schemas.SourceExplore {
		return nil, fmt.Errorf("%w: %s has source %q", ErrNotExplore, t.ID, t.Source)
	}
	if t.Swapped {
		return nil, fmt.Errorf("%w: %s", ErrAlreadySwapped, t.ID)
	}
	out := t.Clone()
	last := len(out.Steps) - 1
	for i := range out.Steps {
		s := &out.Steps[i]
		if s.DenseReward == 0 {
			s.DenseReward = s.Reward
		}
		s.Reward = 0
		if i == last {
			s.Reward = out.OutcomeReward
		}
	}
	out.Swapped = true
	out.DistinctStates, out.RepeatedVisits = schemas.StateStats(out.Steps)
	return out, nil
}
