package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"512MiB", 512 << 20, true}, {"2GiB", 2 << 30, true}, {"64KiB", 64 << 10, true}, {"1000", 1000, true},
		{"off", 0, true}, {"0", 0, false}, {"-1MiB", 0, false}, {"lots", 0, false}, {"", 0, false},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d (ok %v)", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestMemoryLimitFlagFailsFast(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	if _, _, err := runRspo(testContext(t), "--memory-limit", "lots", "version"); err == nil {
		t.Error("a bad --memory-limit was accepted")
	}
}

func TestLimitFor(t *testing.T) {
	const mib = 1 << 20
	tests := []struct{ floor, live, want int64 }{
		{400 * mib, 0, 400 * mib},
		{400 * mib, 200 * mib, 400 * mib},
		{400 * mib, 320 * mib, 400 * mib},
		{400 * mib, 400 * mib, 500 * mib},
		{400 * mib, 1400 * mib, 1750 * mib},
	}
	for _, tt := range tests {
		if got := limitFor(tt.floor, tt.live); got != tt.want {
			t.Errorf("limitFor(%d MiB, %d MiB) = %d MiB, want %d MiB", tt.floor/mib, tt.live/mib, got/mib, tt.want/mib)
		}
	}
}

// The limit rises above a live heap that outgrows the floor, so that the
// collector does not run back to back, and returns to the floor once the
// heap is freed.
func TestMemoryLimitFollowsTheLiveHeap(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() {
		memoryFloor.Store(0)
		debug.SetMemoryLimit(before)
	})
	const floor = 16 << 20
	if err := applyMemoryLimit("16MiB"); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 256<<20)
	for i := range big {
		big[i] = byte(i)
	}
	runtime.GC()
	fitMemoryLimit()
	if got := debug.SetMemoryLimit(-1); got < 256<<20 {
		t.Errorf("with a 256 MiB live heap the limit is %d MiB, want it above the live heap", got>>20)
	}
	runtime.KeepAlive(big)
	big = nil
	runtime.GC()
	fitMemoryLimit()
	if got := debug.SetMemoryLimit(-1); got >= 256<<20 {
		t.Errorf("with the heap freed the limit stays at %d MiB, want it back near the %d MiB floor", got>>20, floor>>20)
	}
}

// --memory-limit off lifts a limit an earlier command of the same process
// set, and the follower leaves it lifted.
func TestMemoryLimitOffLiftsTheLimit(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	if err := applyMemoryLimit("64MiB"); err != nil {
		t.Fatal(err)
	}
	if err := applyMemoryLimit("off"); err != nil {
		t.Fatal(err)
	}
	fitMemoryLimit()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("limit %d after --memory-limit off, want none (%d)", got, int64(math.MaxInt64))
	}
}
