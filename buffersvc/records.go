package buffersvc

import (
	"encoding/binary"
	"fmt"

	"github.com/rspo-dev/rspo/schemas"
)

// The sample reply's body (format "records/1", announced in the
// Rspo-Reply-Format header of every part): the sampled records exactly as
// the swapper published them on rspo.<run>.swapped — each a complete Arrow
// IPC stream of one trajectory — one after the other, each preceded by its
// length as a 4-byte big-endian unsigned integer. The buffer sends the
// bytes it stored without decoding them; the client decodes (and so
// validates) each record once. A reply without the header is the older
// format, one schemas.EncodeTrajectoryBatch stream, which clients still read.
const (
	// HeaderReplyFormat names the sample reply's body format.
	HeaderReplyFormat = "Rspo-Reply-Format"
	// ReplyFormatRecords is the length-prefixed concatenation of records.
	ReplyFormatRecords = "records/1"
)

// DecodeRecords decodes a "records/1" reply body holding want records.
// Every error wraps ErrBadReply.
func DecodeRecords(b []byte, want int) ([]*schemas.Trajectory, error) {
	if want < 0 || want > MaxSampleCount {
		return nil, fmt.Errorf("%w: %d records announced", ErrBadReply, want)
	}
	out := make([]*schemas.Trajectory, 0, want)
	for len(b) > 0 {
		if len(b) < 4 {
			return nil, fmt.Errorf("%w: %d trailing bytes", ErrBadReply, len(b))
		}
		n := binary.BigEndian.Uint32(b)
		if uint64(n) > uint64(len(b)-4) {
			return nil, fmt.Errorf("%w: record of %d bytes with %d left", ErrBadReply, n, len(b)-4)
		}
		if len(out) == want {
			return nil, fmt.Errorf("%w: more records than the %d announced", ErrBadReply, want)
		}
		t, err := schemas.DecodeTrajectory(b[4 : 4+n])
		if err != nil {
			return nil, fmt.Errorf("%w: record %d: %w", ErrBadReply, len(out), err)
		}
		out, b = append(out, t), b[4+n:]
	}
	if len(out) != want {
		return nil, fmt.Errorf("%w: %d records decoded, the reply announced %d", ErrBadReply, len(out), want)
	}
	return out, nil
}
