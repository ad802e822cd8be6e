// Package trajfile reads and writes files of trajectories, the offline input
// of `rspo prm train --file`.
//
// A file is either one Arrow IPC stream exactly as schemas.EncodeTrajectoryBatch
// writes it, or — when the trajectories do not fit in one batch message
// (schemas.MaxBatchTrajectories, schemas.MaxBatchBytes) — a sequence of such
// streams framed as
//
//	magic  8 bytes "RSPOTRJ1"
//	then per chunk: length uint64 little-endian, then that many bytes of one
//	EncodeTrajectoryBatch stream.
//
// Write emits the plain form whenever everything fits in one chunk.
package trajfile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/rspo-dev/rspo/schemas"
)

const magic = "RSPOTRJ1"

// DefaultChunk is how many trajectories Write puts in one chunk.
const DefaultChunk = 512

// ErrFormat means the bytes are neither a trajectory batch nor a framed file.
var ErrFormat = errors.New("trajfile: malformed trajectory file")

// Write writes trajs to path in chunks of DefaultChunk trajectories.
func Write(path string, trajs []*schemas.Trajectory) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	if err := Encode(bw, trajs, DefaultChunk); err != nil {
		f.Close()
		return fmt.Errorf("trajfile: %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Encode writes trajs to w, chunk trajectories per batch stream (at most
// schemas.MaxBatchTrajectories). Invalid trajectories return schemas'
// validation error.
func Encode(w io.Writer, trajs []*schemas.Trajectory, chunk int) error {
	if chunk < 1 || chunk > schemas.MaxBatchTrajectories {
		return fmt.Errorf("trajfile: chunk %d not in 1..%d", chunk, schemas.MaxBatchTrajectories)
	}
	if len(trajs) <= chunk {
		b, err := schemas.EncodeTrajectoryBatch(trajs)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	if _, err := io.WriteString(w, magic); err != nil {
		return err
	}
	for lo := 0; lo < len(trajs); lo += chunk {
		b, err := schemas.EncodeTrajectoryBatch(trajs[lo:min(lo+chunk, len(trajs))])
		if err != nil {
			return fmt.Errorf("trajectories %d..: %w", lo, err)
		}
		if _, err := w.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(b)))); err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// Read reads every trajectory of the file at path.
func Read(path string) ([]*schemas.Trajectory, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	trajs, err := Decode(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return trajs, nil
}

// Decode reads a file's bytes. Errors: ErrFormat for bad framing, or
// schemas' decode and validation errors for a bad chunk.
func Decode(b []byte) ([]*schemas.Trajectory, error) {
	if len(b) < len(magic) || string(b[:len(magic)]) != magic {
		return schemas.DecodeTrajectoryBatch(b)
	}
	var out []*schemas.Trajectory
	for rest := b[len(magic):]; len(rest) > 0; {
		if len(rest) < 8 {
			return nil, fmt.Errorf("%w: %d stray bytes after the last chunk", ErrFormat, len(rest))
		}
		n := binary.LittleEndian.Uint64(rest)
		if n > uint64(len(rest)-8) || n > schemas.MaxBatchBytes {
			return nil, fmt.Errorf("%w: chunk of %d bytes, %d left in the file", ErrFormat, n, len(rest)-8)
		}
		trajs, err := schemas.DecodeTrajectoryBatch(rest[8 : 8+n])
		if err != nil {
			return nil, fmt.Errorf("chunk at trajectory %d: %w", len(out), err)
		}
		out = append(out, trajs...)
		rest = rest[8+n:]
	}
	return out, nil
}
