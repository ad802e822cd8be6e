package prm

import (
	"errors"
	"testing"
)

// FuzzDecodeSnapshot checks that no input crashes the decoder, that every
// failure is one of the documented errors, and that whatever decodes
// round-trips. Each input is tried as is and with its checksum repaired, so
// the fuzzer also reaches the parsing behind the checksum.
func FuzzDecodeSnapshot(f *testing.F) {
	good, err := EncodeSnapshot(smallModel(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Fuzz(func(t *testing.T, b []byte) {
		inputs := [][]byte{b}
		if len(b) >= 4 {
			inputs = append(inputs, withChecksum(b))
		}
		for _, in := range inputs {
			m, err := DecodeSnapshot(in)
			if err != nil {
				if !documentedDecodeError(err) {
					t.Fatalf("undocumented error %v", err)
				}
				continue
			}
			again, err := EncodeSnapshot(m)
			if err != nil {
				t.Fatalf("decoded model does not re-encode: %v", err)
			}
			m2, err := DecodeSnapshot(again)
			if err != nil {
				t.Fatalf("re-encoded snapshot does not decode: %v", err)
			}
			for i := range m.params {
				if m.params[i] != m2.params[i] {
					t.Fatalf("parameter %d: %v after round trip, want %v", i, m2.params[i], m.params[i])
				}
			}
		}
	})
}

func documentedDecodeError(err error) bool {
	for _, e := range []error{ErrNotSnapshot, ErrSnapshotVersion, ErrCorrupt, ErrUnknownFeaturizer, ErrInvalidConfig} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
