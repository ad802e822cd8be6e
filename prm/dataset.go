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
// It grows by Add, so trajectories need not all be in memory at once.
type dataset struct {
	feat Featurizer
	dim  int
	// slabs hold the unique feature rows, slabRows rows of dim each: the
	// rows are appended without copying those already there.
	slabs [][]float32
	n     int // rows held
	// steps[i] lists trajectory i's row indices in step order.
	steps   [][]int32
	outcome []float64
	success []bool
	// keys decide the held-out split: the task (trajectories of one task
	// stay on one side), or the trajectory id when the task is unknown.
	keys []string
	// stepCount adds up the steps of every trajectory added.
	stepCount int

	seeds [2]maphash.Seed
	index map[[2]uint64]int32
	// pending are the new unique steps not featurized yet: they are
	// featurized scoreChunkRows at a time, the chunks one add of every
	// trajectory would ask a featurizer for (a BatchFeaturizer's answers
	// may depend on its batch), and the last by finish.
	pending []StepText
}

// slabRows is how many feature rows one slab of a dataset holds.
const slabRows = 1 << 14

func (d *dataset) numRows() int { return d.n }
func (d *dataset) row(r int32) []float32 {
	slab := d.slabs[int(r)/slabRows]
	k := int(r) % slabRows
	return slab[k*d.dim : (k+1)*d.dim]
}

// newDataset featurizes trajs with feat (newEmptyDataset, then add).
func newDataset(ctx context.Context, feat Featurizer, trajs []*schemas.Trajectory) (*dataset, error) {
	d := newEmptyDataset(feat)
	if err := d.add(ctx, trajs); err != nil {
		return nil, err
	}
	return d, d.finish(ctx)
}

func newEmptyDataset(feat Featurizer) *dataset {
	return &dataset{feat: feat, dim: feat.Dim(), seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()},
		index: map[[2]uint64]int32{}}
}

// add featurizes trajs, after those added before, scoreChunkRows distinct
// new steps per featurizer call: the rows and indices are those one add of
// every trajectory in the same order gives. A nil trajectory or a
// non-finite outcome is an error wrapping ErrInvalidTrajectory; a failing
// BatchFeaturizer's wraps ErrFeaturizer.
func (d *dataset) add(ctx context.Context, trajs []*schemas.Trajectory) error {
	for _, t := range trajs {
		if err := checkTrajectory(len(d.steps), t); err != nil {
			return err
		}
		d.outcome, d.success, d.keys = append(d.outcome, t.OutcomeReward), append(d.success, t.Success), append(d.keys, splitKey(t))
		rows := make([]int32, len(t.Steps))
		for k := range t.Steps {
			st := &t.Steps[k]
			key := stepKey(d.seeds, t.Instruction, st.Observation, st.Action)
			r, ok := d.index[key]
			if !ok {
				r = int32(len(d.index))
				d.index[key] = r
				d.pending = append(d.pending, StepText{t.Instruction, st.Observation, st.Action})
			}
			rows[k] = r
		}
		d.steps = append(d.steps, rows)
		d.stepCount += len(t.Steps)
		for len(d.pending) >= scoreChunkRows {
			if err := d.featurizeChunk(ctx, scoreChunkRows); err != nil {
				return err
			}
		}
	}
	return nil
}

// finish featurizes the steps still pending; the dataset is complete.
func (d *dataset) finish(ctx context.Context) error {
	if len(d.pending) == 0 {
		return nil
	}
	return d.featurizeChunk(ctx, len(d.pending))
}

// featurizeChunk featurizes the first n pending steps into the next rows
// (scoreChunkRows divides slabRows, so a chunk fills one slab at most).
func (d *dataset) featurizeChunk(ctx context.Context, n int) error {
	r := d.n
	if r%slabRows == 0 {
		d.slabs = append(d.slabs, make([]float32, slabRows*d.dim))
	}
	slab, k := d.slabs[r/slabRows], r%slabRows
	if err := featurize(ctx, d.feat, d.pending[:n], slab[k*d.dim:(k+n)*d.dim]); err != nil {
		return fmt.Errorf("prm: featurize training steps %d..%d: %w", r, r+n-1, err)
	}
	d.n += n
	d.pending = append(d.pending[:0], d.pending[n:]...)
	return nil
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
