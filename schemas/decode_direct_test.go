package schemas

import (
	"encoding/binary"
	"reflect"
	"testing"
)

// sameDecode fails t unless the direct decode and the Arrow reader's agree
// on b: both accept it with equal trajectories, or both reject it with
// the same error. It also decodes b from a misaligned copy.
func sameDecode(t *testing.T, b []byte) {
	t.Helper()
	want, wantErr := decodeTrajectory(b, false)
	odd := make([]byte, len(b)+1)[1:]
	copy(odd, b)
	for _, in := range [][]byte{b, odd} {
		got, err := decodeTrajectory(in, true)
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("direct decode error %v, the Arrow reader's %v", err, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("direct decode gives %s, the Arrow reader %s", describe(got), describe(want))
		}
	}
}

// FuzzDecodeDirect checks that the direct decode is the Arrow reader's
// decode: on any bytes, both accept with the same trajectory or reject
// with the same error. Its seeds are FuzzDecodeTrajectory's
// (testdata/fuzz/FuzzDecodeDirect).
// Run with: go test ./schemas -run '^$' -fuzz FuzzDecodeDirect
func FuzzDecodeDirect(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) { sameDecode(t, b) })
}

// The direct decode takes the messages this package writes.
func TestDecodeDirectTakesOurMessages(t *testing.T) {
	for _, tr := range []*Trajectory{fixture(), realistic(32), realistic(1)} {
		b := rawEncode(t, tr)
		got, ok, err := decodeDirect(b)
		if !ok || err != nil {
			t.Fatalf("decodeDirect: ok %v, err %v; want it to decode", ok, err)
		}
		if !reflect.DeepEqual(got, tr) {
			t.Fatalf("decodeDirect gives %s, want %s", describe(got), describe(tr))
		}
	}
}

// Every corruption of the record batch's metadata (its field nodes and
// buffers: lengths, null counts, offsets) and of the value offsets in its
// body decodes as the Arrow reader decodes it.
func TestDecodeDirectMatchesArrowOnCorruptMessages(t *testing.T) {
	for _, tr := range []*Trajectory{fixture(), realistic(3)} {
		b := rawEncode(t, tr)
		sameDecode(t, b)
		rb, err := locateRecordBatch(b)
		if err != nil {
			t.Fatal(err)
		}
		// The metadata, 8 bytes at a time: every field node and buffer
		// word is hit, with values that break each kind of check.
		start := len(schemaMessage) + 8
		for at := start; at+8 <= int(rb.bodyStart); at += 4 {
			orig := binary.LittleEndian.Uint64(b[at:])
			for _, v := range []uint64{0, 1, orig + 1, orig - 1, orig + 8, orig * 2, 1 << 40, ^uint64(0)} {
				binary.LittleEndian.PutUint64(b[at:], v)
				sameDecode(t, b)
			}
			binary.LittleEndian.PutUint64(b[at:], orig)
		}
		// The first bytes of every buffer of the body (offsets of strings
		// and lists, the first values).
		for _, buf := range rb.bufs {
			at := int(rb.bodyStart + buf.offset)
			if buf.length < 4 {
				continue
			}
			orig := binary.LittleEndian.Uint32(b[at:])
			for _, v := range []uint32{1, orig + 1, 1 << 20, ^uint32(0)} {
				binary.LittleEndian.PutUint32(b[at:], v)
				sameDecode(t, b)
			}
			binary.LittleEndian.PutUint32(b[at:], orig)
		}
	}
}
