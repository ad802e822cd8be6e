package schemas

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/ipc"
)

// DecodeTrajectory reads one trajectory from an Arrow IPC stream written by
// EncodeTrajectory and validates it. It never panics. The result shares no
// memory with b. Empty lists decode as nil and CreatedAt as a UTC time (or
// the zero time).
//
// Errors:
//   - *DecodeError (ErrDecode): the bytes are larger than MaxMessageBytes,
//     are not a complete Arrow IPC stream (truncated, corrupt, trailing bytes),
//     hold no record batch or more than one, or a column holds nulls or
//     out-of-range offsets;
//   - *SchemaError (ErrSchemaVersion): the schema has another
//     rspo.schema_version, none, or different columns;
//   - *ValidationError (ErrInvalid): the rows are a trajectory that Validate
//     rejects, or a trajectory column differs between rows.
func DecodeTrajectory(b []byte) (*Trajectory, error) {
	return decodeTrajectory(b, true)
}

// decodeTrajectory is DecodeTrajectory; with direct, the messages that
// decodeDirect takes are decoded without Arrow's reader (the tests compare
// both paths).
func decodeTrajectory(b []byte, direct bool) (*Trajectory, error) {
	if len(b) > MaxMessageBytes {
		return nil, &DecodeError{Reason: fmt.Sprintf("message of %d bytes, at most %d", len(b), MaxMessageBytes)}
	}
	if direct {
		if t, ok, err := decodeDirect(b); ok {
			return t, err
		}
	}
	var t *Trajectory
	err := readStream(b, func(rec arrow.Record) error {
		if t != nil {
			return &DecodeError{Reason: "more than one record batch (a batch of trajectories is read with DecodeTrajectoryBatch)"}
		}
		var err error
		t, err = recordToTrajectory(rec)
		return err
	})
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, &DecodeError{Reason: "the stream holds no record batch"}
	}
	return t, nil
}

// DecodeTrajectoryBatch reads the trajectories of a stream written by
// EncodeTrajectoryBatch, one per record batch, in order; a stream with no
// record batch gives an empty slice. It checks and reports errors as
// DecodeTrajectory does, with the limits MaxBatchBytes and
// MaxBatchTrajectories, and names the offending trajectory ("[i].field" for
// a *ValidationError, "record batch i" for a *DecodeError).
func DecodeTrajectoryBatch(b []byte) ([]*Trajectory, error) {
	if len(b) > MaxBatchBytes {
		return nil, &DecodeError{Reason: fmt.Sprintf("batch message of %d bytes, at most %d", len(b), MaxBatchBytes)}
	}
	ts := []*Trajectory{}
	err := readStream(b, func(rec arrow.Record) error {
		if len(ts) == MaxBatchTrajectories {
			return &ValidationError{Field: "batch", Reason: fmt.Sprintf("more than %d trajectories", MaxBatchTrajectories)}
		}
		t, err := recordToTrajectory(rec)
		if err != nil {
			return inBatch(len(ts), err)
		}
		ts = append(ts, t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ts, nil
}

// readStream reads the IPC stream b, checks its schema, and calls each for
// every record batch. The record is valid only during the call. Panics of
// the Arrow reader on corrupt input are recovered as a *DecodeError.
func readStream(b []byte, each func(arrow.Record) error) (err error) {
	d := decoders.Get().(*decoder)
	reusable := false
	defer func() {
		if p := recover(); p != nil {
			err = &DecodeError{Reason: "corrupt Arrow data", Err: fmt.Errorf("%v", p)}
		}
		if reusable && cap(d.arena.slab) <= maxPooledArena {
			decoders.Put(d)
		}
	}()
	d.reset(b)
	if bytes.HasPrefix(b, schemaMessage) {
		err = d.readKnownSchema(each)
	} else {
		err = d.readAnySchema(each)
	}
	reusable = true
	return err
}

// decoder is the pooled state of a decode: the message reader, the arena
// Arrow copies buffers into, and an Arrow reader that has already read our
// schema message. Streams that start with exactly that message (all that
// this package writes) skip parsing and checking the schema again: the
// pooled reader reads just their record batches. Others get a fresh reader
// and a full schema check.
type decoder struct {
	mr    messageReader
	arena decodeArena
	// known reads record batches under trajectorySchema; nil until the
	// first stream with our schema message, and after an error.
	known *ipc.Reader
	// rb and cr are the record batch and the column reader of a direct
	// decode (decodeDirect).
	rb recordBatch
	cr columnReader
}

var decoders = sync.Pool{New: func() any { return new(decoder) }}

func (d *decoder) reset(b []byte) {
	d.mr = messageReader{b: b}
	d.arena.reset(len(b))
}

// readKnownSchema reads a stream whose schema message is schemaMessage.
func (d *decoder) readKnownSchema(each func(arrow.Record) error) error {
	if d.known == nil {
		r, err := ipc.NewReaderFromMessageReader(&d.mr, ipc.WithAllocator(&d.arena))
		if err != nil {
			return streamError(&d.mr, "not an Arrow IPC stream", err)
		}
		if err := checkSchema(r.Schema()); err != nil {
			return err
		}
		d.known = r
	} else {
		d.mr.off = len(schemaMessage)
	}
	for !d.mr.atEnd() {
		if !d.known.Next() {
			err := d.known.Err()
			d.known = nil
			if err == nil {
				err = errors.New("unexpected end of stream")
			}
			return streamError(&d.mr, "corrupt record batch", err)
		}
		if err := each(d.known.Record()); err != nil {
			return err
		}
	}
	return d.mr.finish()
}

// readAnySchema reads a stream with a fresh Arrow reader, checking its
// schema against ours.
func (d *decoder) readAnySchema(each func(arrow.Record) error) error {
	r, err := ipc.NewReaderFromMessageReader(&d.mr, ipc.WithAllocator(&d.arena))
	if err != nil {
		return streamError(&d.mr, "not an Arrow IPC stream", err)
	}
	defer r.Release()
	if err := checkSchema(r.Schema()); err != nil {
		return err
	}
	for r.Next() {
		if err := each(r.Record()); err != nil {
			return err
		}
	}
	if err := r.Err(); err != nil {
		return streamError(&d.mr, "corrupt record batch", err)
	}
	return d.mr.finish()
}

// streamError prefers the message reader's own framing error, which says
// more precisely what is wrong, over the Arrow reader's.
func streamError(mr *messageReader, reason string, err error) error {
	if mr.err != nil {
		return mr.err
	}
	if errors.Is(err, errAllocBudget) {
		return &DecodeError{Reason: "buffer sizes exceed the message", Err: err}
	}
	return &DecodeError{Reason: reason, Err: err}
}

// inBatch names the trajectory's position in a batch in a *ValidationError
// or *DecodeError.
func inBatch(i int, err error) error {
	var ve *ValidationError
	if errors.As(err, &ve) {
		return &ValidationError{Field: fmt.Sprintf("[%d].%s", i, ve.Field), Reason: ve.Reason}
	}
	var de *DecodeError
	if errors.As(err, &de) {
		return &DecodeError{Reason: fmt.Sprintf("record batch %d: %s", i, de.Reason), Err: de.Err}
	}
	return fmt.Errorf("schemas: trajectory %d: %w", i, err)
}
