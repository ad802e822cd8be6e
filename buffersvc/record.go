package buffersvc

import (
	"errors"
	"fmt"

	"github.com/rspo-dev/rspo/schemas"
)

// ErrNotRecord means a message on the swapped subject is a valid trajectory
// but not a buffer record: not swapped, rewards not in outcome form, or
// priority keys that its state keys contradict.
var ErrNotRecord = errors.New("buffersvc: not a buffer record")

// EntryOf checks that t, decoded from data, is a buffer record and returns
// its entry. It returns ErrNotRecord, with the reason, when it is not.
func EntryOf(t *schemas.Trajectory, data []byte) (Entry, error) {
	if err := checkRecord(t); err != nil {
		return Entry{}, err
	}
	return Entry{
		Run: t.Run, Cycle: t.Cycle, ID: t.ID, TaskID: t.TaskID, Reward: t.OutcomeReward,
		Distinct: t.DistinctStates, Repeats: t.RepeatedVisits, Success: t.Success, Data: data,
	}, nil
}

// checkRecord re-checks what the swapper guarantees, so that a record
// published on the swapped subject by anything else cannot carry training
// labels other than the outcome or inflate its priority.
func checkRecord(t *schemas.Trajectory) error {
	if !t.Swapped {
		return fmt.Errorf("%w: %s is not swapped", ErrNotRecord, t.ID)
	}
	last := len(t.Steps) - 1
	for i, s := range t.Steps {
		want := 0.0
		if i == last {
			want = t.OutcomeReward
		}
		if s.Reward != want {
			return fmt.Errorf("%w: %s step %d has reward %v, the outcome form wants %v", ErrNotRecord, t.ID, i, s.Reward, want)
		}
	}
	if d, r := schemas.StateStats(t.Steps); d != t.DistinctStates || r != t.RepeatedVisits {
		return fmt.Errorf("%w: %s claims %d distinct states and %d repeats, its state keys give %d and %d",
			ErrNotRecord, t.ID, t.DistinctStates, t.RepeatedVisits, d, r)
	}
	return nil
}
