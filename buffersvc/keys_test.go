package buffersvc

import (
	"bytes"
	"math"
	"testing"
)

func TestPriorityOrder(t *testing.T) {
	type keys struct {
		reward            float64
		distinct, repeats int32
	}
	tests := []struct {
		name          string
		first, second keys
	}{
		{"higher reward first", keys{1, 1, 9}, keys{0.5, 9, 0}},
		{"positive before negative", keys{0, 1, 0}, keys{-0.5, 1, 0}},
		{"less negative first", keys{-0.25, 1, 0}, keys{-1, 9, 0}},
		{"tiny reward above zero", keys{math.SmallestNonzeroFloat64, 1, 0}, keys{0, 9, 0}},
		{"more distinct states first", keys{1, 7, 5}, keys{1, 6, 0}},
		{"fewer repeats first", keys{1, 7, 2}, keys{1, 7, 3}},
		{"zero repeats first", keys{0, 0, 0}, keys{0, 0, math.MaxInt32}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := priorityOf(tt.first.reward, tt.first.distinct, tt.first.repeats)
			b := priorityOf(tt.second.reward, tt.second.distinct, tt.second.repeats)
			if got := bytes.Compare(a[:], b[:]); got != -1 {
				t.Errorf("compare(%v, %v) = %d, want -1", tt.first, tt.second, got)
			}
		})
	}
}

func TestPriorityNegativeZeroTiesWithZero(t *testing.T) {
	if a, b := priorityOf(math.Copysign(0, -1), 3, 1), priorityOf(0, 3, 1); a != b {
		t.Errorf("priority(-0) = %x, want priority(+0) = %x", a, b)
	}
}

func TestPrefixEnd(t *testing.T) {
	tests := []struct {
		name   string
		prefix []byte
		want   []byte
	}{
		{"plain", []byte("ab"), []byte("ac")},
		{"carry", []byte{'a', 0xff}, []byte{'b'}},
		{"all ff", []byte{0xff, 0xff}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := prefixEnd(tt.prefix); !bytes.Equal(got, tt.want) {
				t.Errorf("prefixEnd(%x) = %x, want %x", tt.prefix, got, tt.want)
			}
		})
	}
}

func TestKeySpacesOfRunsDoNotOverlap(t *testing.T) {
	// A run whose name extends another's must not fall in its prefix range.
	a, b := runPrefix(spaceCycle, "a"), recordKey("ab", 0, "x")
	if bytes.HasPrefix(b, a) {
		t.Errorf("record key of run ab %q lies under run a's prefix %q", b, a)
	}
	lo, hi := cyclePrefix(spaceCycle, "r", 0), cyclePrefix(spaceCycle, "r", 3)
	for _, k := range [][]byte{recordKey("r", 2, "z"), prioKey("r", 2, priority{0xff}, "z"), taskKey("r", 2, "t", priority{}, "z")} {
		if bytes.Compare(k, lo) < 0 || bytes.Compare(k, hi) >= 0 {
			t.Errorf("key %q of cycle 2 outside the range of cycles 0..2", k)
		}
	}
	if k := recordKey("r", 3, ""); bytes.Compare(k, hi) < 0 {
		t.Errorf("key %q of cycle 3 inside the range of cycles 0..2", k)
	}
}
