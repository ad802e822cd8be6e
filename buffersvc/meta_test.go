package buffersvc

import (
	"errors"
	"math"
	"testing"
)

func TestMetaRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		m    meta
	}{
		{"zero", meta{}},
		{"full", meta{Reward: 0.75, Distinct: 12, Repeats: 3, Samples: 7, Size: 4096, Success: true, TaskID: "household/train/12"}},
		{"exhausted failure", meta{Reward: -1, Exhausted: true, TaskID: "t"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeMeta(tt.m.encode())
			if err != nil {
				t.Fatalf("decodeMeta: %v", err)
			}
			if got != tt.m {
				t.Errorf("got %+v, want %+v", got, tt.m)
			}
		})
	}
}

func TestDecodeShortValues(t *testing.T) {
	if _, err := decodeMeta(make([]byte, metaFixedLen-1)); !errors.Is(err, ErrInternal) {
		t.Errorf("decodeMeta(short) error = %v, want ErrInternal", err)
	}
	if _, err := decodeCounters(make([]byte, countersLen+1)); !errors.Is(err, ErrInternal) {
		t.Errorf("decodeCounters(long) error = %v, want ErrInternal", err)
	}
}

func TestCountersRoundTrip(t *testing.T) {
	c := cycleCounters{Records: 3, Bytes: 1 << 40, Successes: 2, RewardSum: 1.5, Served: 99}
	got, err := decodeCounters(c.encode())
	if err != nil || got != c {
		t.Errorf("got %+v, %v; want %+v, nil", got, err, c)
	}
}

func FuzzDecodeMeta(f *testing.F) {
	f.Add(meta{Reward: 1, Distinct: 4, Repeats: 2, Samples: 1, Size: 10, Success: true, TaskID: "a"}.encode())
	f.Add(make([]byte, metaFixedLen))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeMeta(b)
		if err != nil {
			return
		}
		again, err := decodeMeta(m.encode())
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if again != m && !(math.IsNaN(m.Reward) && math.IsNaN(again.Reward)) {
			t.Errorf("round trip: got %+v, want %+v", again, m)
		}
	})
}
