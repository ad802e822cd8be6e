package schemas

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// continuationMarker starts every encapsulated IPC message (format ≥ 0.15).
const continuationMarker = 0xFFFFFFFF

// messageReader is an ipc.MessageReader over an in-memory IPC stream. Unlike
// the Arrow reader's own, it checks every length prefix against the bytes
// that remain, and each message's metadata with checkMessageMeta, before
// Arrow sees them, so corrupt lengths cannot make the decoder allocate
// beyond the message; and it hands message bodies to Arrow without copying.
// It requires the end-of-stream marker and nothing after it.
type messageReader struct {
	b   []byte
	off int
	// eos is set once the end-of-stream marker has been read.
	eos bool
	// err is the first framing error, kept so the decoder can report it
	// rather than the Arrow reader's wrapping of it.
	err *DecodeError
	msg *ipc.Message
}

var _ ipc.MessageReader = (*messageReader)(nil)

// Message returns the next message, or io.EOF after the end-of-stream marker.
func (r *messageReader) Message() (*ipc.Message, error) {
	if r.eos {
		return nil, io.EOF
	}
	if r.err != nil {
		return nil, r.err
	}
	r.releaseMsg()
	msg, err := r.next()
	if err != nil {
		if !errors.Is(err, io.EOF) {
			r.err = &DecodeError{Reason: fmt.Sprintf("at byte %d", r.off), Err: err}
			return nil, r.err
		}
		return nil, err
	}
	r.msg = msg
	return msg, nil
}

// next parses the framing of the message at r.off.
func (r *messageReader) next() (*ipc.Message, error) {
	rest := r.b[r.off:]
	if len(rest) < 8 {
		return nil, fmt.Errorf("stream truncated: %d bytes left where a message prefix (8) or the end-of-stream marker was expected", len(rest))
	}
	if binary.LittleEndian.Uint32(rest) != continuationMarker {
		return nil, errors.New("no IPC continuation marker (not an Arrow IPC stream)")
	}
	metaLen := int64(int32(binary.LittleEndian.Uint32(rest[4:])))
	rest = rest[8:]
	if metaLen == 0 {
		r.eos = true
		r.off += 8
		return nil, io.EOF
	}
	if metaLen < 0 || metaLen > int64(len(rest)) {
		return nil, fmt.Errorf("message metadata of %d bytes, only %d left", metaLen, len(rest))
	}
	meta := rest[:metaLen]
	_, bodyLen, err := checkMessageMeta(meta)
	if err != nil {
		return nil, err
	}
	rest = rest[metaLen:]
	if bodyLen < 0 || bodyLen > int64(len(rest)) {
		return nil, fmt.Errorf("message body of %d bytes, only %d left", bodyLen, len(rest))
	}
	r.off += 8 + int(metaLen) + int(bodyLen)
	return ipc.NewMessage(memory.NewBufferBytes(meta), memory.NewBufferBytes(rest[:bodyLen])), nil
}

// atEnd reports whether the end-of-stream marker comes next, and if so
// consumes it.
func (r *messageReader) atEnd() bool {
	if r.eos {
		return true
	}
	if r.err == nil && r.off <= len(r.b)-8 && bytes.Equal(r.b[r.off:r.off+8], eosMarker) {
		r.off += 8
		r.eos = true
		return true
	}
	return false
}

// finish reports whether the stream ended properly: with its end-of-stream
// marker and no bytes after it.
func (r *messageReader) finish() error {
	switch {
	case r.err != nil:
		return r.err
	case !r.eos:
		return &DecodeError{Reason: "stream ends without the end-of-stream marker"}
	case r.off != len(r.b):
		return &DecodeError{Reason: fmt.Sprintf("%d bytes after the end-of-stream marker", len(r.b)-r.off)}
	}
	return nil
}

func (r *messageReader) releaseMsg() {
	if r.msg != nil {
		r.msg.Release()
		r.msg = nil
	}
}

// Retain is a no-op: the reader lives for one decode call.
func (r *messageReader) Retain() {}

// Release drops the current message.
func (r *messageReader) Release() { r.releaseMsg() }
