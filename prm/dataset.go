package prm

import (
	"context"
	"fmt"
	"hash/maphash"
	"math"

	"github.com/rspo-dev/rspo/schemas"
)

// dataset is a set of trajectories featurized once: identical steps
// (same instruction, observation and action) share one feature row, which
// both saves memory and lets a minibatch evaluate each distinct step once.
type dataset struct {
	dim  int
	rows []float32 // unique feature rows, dim each
	// steps[i] lists trajectory i's row indices in step order.
	steps   [][]int32
	outcome []float64
	success []bool
	// keys decide the held-out split: the task (trajectories of one task
	// stay on one side), or the trajectory id when the task is unknown.
	keys []string
}

func (d *dataset) numRows() int { return len(d.rows) / d.dim }
func (d *dataset) row(r int32) []float32 {
	return d.rows[int(r)*d.dim : (int(r)+1)*d.dim]
}

// newDataset featurizes trajs with feat, scoreChunkRows distinct steps per
// featurizer call. A nil trajectory or a non-finite outcome is an error
// wrapping ErrInvalidTrajectory; a failing BatchFeaturizer's wraps
// ErrFeaturizer.
func newDataset(ctx context.Context, feat Featurizer, trajs []*schemas.Trajectory) (*dataset, error) {
	d := &dataset{dim: feat.Dim(), steps: make([][]int32, len(trajs)),
		outcome: make([]float64, len(trajs)), success: make([]bool, len(trajs)), keys: make([]string, len(trajs))}
	seeds := [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}
	index := map[[2]uint64]int32{}
	var unique []StepText
	for i, t := range trajs {
		if err := checkTrajectory(i, t); err != nil {
			return nil, err
		}
		d.outcome[i], d.success[i], d.keys[i] = t.OutcomeReward, t.Success, splitKey(t)
		d.steps[i] = make([]int32, len(t.Steps))
		for k := range t.Steps {
			s := &t.Steps[k]
			key := stepKey(seeds, t.Instruction, s.Observation, s.Action)
			r, ok := index[key]
			if !ok {
				r = int32(len(unique))
				index[key] = r
				unique = append(unique, StepText{t.Instruction, s.Observation, s.Action})
			}
			d.steps[i][k] = r
		}
	}
	d.rows = make([]float32, len(unique)*d.dim)
	for lo := 0; lo < len(unique); lo += scoreChunkRows {
		hi := min(len(unique), lo+scoreChunkRows)
		if err := featurize(ctx, feat, unique[lo:hi], d.rows[lo*d.dim:hi*d.dim]); err != nil {
			return nil, fmt.Errorf("prm: featurize training steps %d..%d of %d: %w", lo, hi-1, len(unique), err)
		}
	}
	return d, nil
}

func checkTrajectory(i int, t *schemas.Trajectory) error {
	switch {
	case t == nil:
		return fmt.Errorf("%w: trajectory %d is nil", ErrInvalidTrajectory, i)
	case math.IsNaN(t.OutcomeReward) || math.IsInf(t.OutcomeReward, 0):
		return fmt.Errorf("%w: trajectory %d (%s) has outcome reward %v", ErrInvalidTrajectory, i, t.ID, t.OutcomeReward)
	}
	return nil
}

// splitKey is the task of t (environment and task id), or its id when the
// task is not recorded.
func splitKey(t *schemas.Trajectory) string {
	if t.TaskID == "" {
		return "id:" + t.ID
	}
	return "task:" + t.Env + "/" + t.TaskID
}

// stepKey is a 128-bit hash of a step's text, used to find duplicates.
func stepKey(seeds [2]maphash.Seed, instruction, observation, action string) [2]uint64 {
	var key [2]uint64
	for j, seed := range seeds {
		var h maphash.Hash
		h.SetSeed(seed)
		h.WriteString(instruction)
		h.WriteByte(0)
		h.WriteString(observation)
		h.WriteByte(0)
		h.WriteString(action)
		key[j] = h.Sum64()
	}
	return key
}
