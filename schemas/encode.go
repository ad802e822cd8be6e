package schemas

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// streamOverhead is a generous allowance for the schema message, the record
// batch headers and padding of one encoded trajectory, used to size the
// output buffer once.
const streamOverhead = 8 << 10

// EncodeTrajectory validates t and returns it in the Arrow IPC stream format:
// the schema message (with SchemaVersionKey in its metadata), one record
// batch with a row per step, and the end-of-stream marker. The bytes are
// deterministic: equal trajectories encode to equal bytes.
//
// It returns a *ValidationError (ErrInvalid) if t is not valid or encodes to
// more than MaxMessageBytes.
func EncodeTrajectory(t *Trajectory) ([]byte, error) {
	size, err := t.validate()
	if err != nil {
		return nil, err
	}
	b, err := writeStream([]*Trajectory{t}, size+streamOverhead)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxMessageBytes {
		return nil, &ValidationError{Field: "trajectory",
			Reason: fmt.Sprintf("encodes to %d bytes, at most %d", len(b), MaxMessageBytes)}
	}
	return b, nil
}

// EncodeTrajectoryBatch validates every trajectory and returns them as one
// Arrow IPC stream with a record batch per trajectory, in order. An empty
// batch is a stream with the schema and no record batches.
//
// It returns a *ValidationError (ErrInvalid) naming the first invalid
// trajectory as "[i].field", or if the batch has more than
// MaxBatchTrajectories trajectories or encodes to more than MaxBatchBytes.
func EncodeTrajectoryBatch(ts []*Trajectory) ([]byte, error) {
	if len(ts) > MaxBatchTrajectories {
		return nil, &ValidationError{Field: "batch",
			Reason: fmt.Sprintf("%d trajectories, at most %d", len(ts), MaxBatchTrajectories)}
	}
	total := streamOverhead
	for i, t := range ts {
		size, err := t.validate()
		if err != nil {
			return nil, inBatch(i, err)
		}
		total += size + streamOverhead/2
	}
	if total > MaxBatchBytes {
		return nil, &ValidationError{Field: "batch",
			Reason: fmt.Sprintf("encodes to about %d bytes, at most %d", total, MaxBatchBytes)}
	}
	b, err := writeStream(ts, total)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxBatchBytes {
		return nil, &ValidationError{Field: "batch",
			Reason: fmt.Sprintf("encodes to %d bytes, at most %d", len(b), MaxBatchBytes)}
	}
	return b, nil
}

// writeStream writes valid trajectories as an IPC stream, one record batch
// each, into a buffer of sizeHint bytes.
func writeStream(ts []*Trajectory, sizeHint int) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(sizeHint)
	w := ipc.NewWriter(&buf, ipc.WithSchema(trajectorySchema), ipc.WithAllocator(memory.DefaultAllocator))
	for _, t := range ts {
		rec := buildRecord(t)
		err := w.Write(rec)
		rec.Release()
		if err != nil {
			return nil, errors.Join(fmt.Errorf("schemas: write arrow record batch: %w", err), w.Close())
		}
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("schemas: close arrow stream: %w", err)
	}
	return buf.Bytes(), nil
}
