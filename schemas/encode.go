package schemas

import (
	"bytes"
	"fmt"
	"sync"

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

// encoder is the reusable state of an encode: an IPC writer, the buffer it
// writes into, and the column scratch space. Encoders are pooled, so a
// message costs one allocation of its final size plus Arrow's own metadata.
//
// The writer stays open across calls: Arrow writes the schema message only
// on a writer's first record batch, so calls after the first write the
// (identical, precomputed) schema message themselves, then the batches,
// then the end-of-stream marker.
type encoder struct {
	out     bytes.Buffer
	w       *ipc.Writer
	started bool // w has written its schema message
	scratch scratch
}

// maxPooledBytes is the largest encoder buffer kept for reuse.
const maxPooledBytes = 4 << 20

var encoders = sync.Pool{New: func() any {
	e := &encoder{}
	e.w = ipc.NewWriter(&e.out, ipc.WithSchema(trajectorySchema), ipc.WithAllocator(memory.DefaultAllocator))
	return e
}}

// schemaMessage and eosMarker are the first and last bytes of every stream.
var schemaMessage, eosMarker = func() ([]byte, []byte) {
	var buf bytes.Buffer
	if err := ipc.NewWriter(&buf, ipc.WithSchema(trajectorySchema)).Close(); err != nil {
		panic(fmt.Sprintf("schemas: cannot write the trajectory schema: %v", err))
	}
	b := buf.Bytes()
	return b[:len(b)-8], b[len(b)-8:]
}()

// writeStream writes valid trajectories as an IPC stream, one record batch
// each. sizeHint is the expected size of the message.
func writeStream(ts []*Trajectory, sizeHint int) ([]byte, error) {
	e := encoders.Get().(*encoder)
	e.out.Reset()
	e.out.Grow(sizeHint)
	if e.started || len(ts) == 0 {
		e.out.Write(schemaMessage)
	}
	for _, t := range ts {
		e.scratch.reset()
		rec := e.scratch.buildRecord(t)
		err := e.w.Write(rec)
		rec.Release()
		if err != nil {
			// e is dropped: its writer may be in any state.
			return nil, fmt.Errorf("schemas: write arrow record batch: %w", err)
		}
		e.started = true
	}
	e.out.Write(eosMarker)
	b := bytes.Clone(e.out.Bytes())
	if e.out.Cap() <= maxPooledBytes {
		encoders.Put(e)
	}
	return b, nil
}
