package main

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"
)

// defaultMemoryLimit is the floor of the soft memory limit the rspo
// process runs under unless told otherwise. Without one the Go heap grows
// to twice its live size between collections, and the embedded server's
// block buffers make a short run's live heap large: a medium-preset RSPO
// run peaked at 1.1–1.4 GiB without a limit and at 513–555 MiB under
// 400–450 MiB (about 800 MiB under 512 MiB), a few per cent slower, with
// the same results. The limit follows the live heap when that outgrows it
// (see limitFor).
const defaultMemoryLimit = "400MiB"

// liveHeapHeadroom is how far above the live heap the limit stays: the
// heap may grow by a quarter of its live size between collections. (1.5
// gave the same speed and let ordinary runs, whose live heap is near the
// floor, peak 0.2–0.4 GiB higher.)
const liveHeapHeadroom = 1.25

// followEvery is how often the limit is fitted to the live heap.
const followEvery = 250 * time.Millisecond

// memoryFloor is the limit's floor in force (0: no limit); one goroutine
// per process fits the limit to it and to the live heap.
var (
	memoryFloor  atomic.Int64
	followerOnce sync.Once
)

// memoryLimitFlag registers --memory-limit on fs.
func memoryLimitFlag(fs *pflag.FlagSet, v *string) {
	fs.StringVar(v, "memory-limit", defaultMemoryLimit,
		"soft memory limit of this process (e.g. 400MiB, 2GiB; off: none), raised to 1.25× the live heap while that needs more; GOMEMLIMIT in the environment takes precedence")
}

// applyMemoryLimit sets the soft memory limit from the flag's value, unless
// GOMEMLIMIT is set (the runtime has applied it already), and keeps it
// fitted to the live heap for the rest of the process.
func applyMemoryLimit(v string) error {
	if os.Getenv("GOMEMLIMIT") != "" {
		return nil
	}
	n, err := parseSize(v)
	if err != nil {
		return fmt.Errorf("--memory-limit %q: %w", v, err)
	}
	memoryFloor.Store(n)
	if n == 0 {
		debug.SetMemoryLimit(math.MaxInt64) // off: the runtime's own default, no limit
	} else {
		fitMemoryLimit()
		followerOnce.Do(func() {
			go func() {
				for range time.Tick(followEvery) {
					fitMemoryLimit()
				}
			}()
		})
	}
	return nil
}

// fitMemoryLimit sets the limit for the floor in force and the live heap
// of the last collection; with no floor (off) it leaves the limit alone.
func fitMemoryLimit() {
	if floor := memoryFloor.Load(); floor > 0 {
		debug.SetMemoryLimit(limitFor(floor, liveHeap()))
	}
}

// limitFor is the soft limit for a live heap of live bytes: the floor, or
// liveHeapHeadroom times the live heap when that is more. A limit below
// the live heap does not make the heap smaller; it makes the collector
// run back to back, with up to half the CPU: training a PRM on 40,000
// source trajectories (a live heap of about 1.4 GiB) took 287 s and 551
// CPU-seconds under a fixed 400 MiB limit, 207 s and 279 CPU-seconds
// with the limit following the heap (the same model, byte for byte).
func limitFor(floor, live int64) int64 {
	return max(floor, int64(float64(live)*liveHeapHeadroom))
}

// liveHeap is the heap the last collection found live, in bytes.
func liveHeap() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// parseSize parses "off" (0) or a positive size with an optional KiB, MiB
// or GiB suffix.
func parseSize(v string) (int64, error) {
	if v == "off" {
		return 0, nil
	}
	units := []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if s, ok := strings.CutSuffix(v, u.suffix); ok {
			v, mult = s, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("want a positive size such as 512MiB or 2GiB, or off")
	}
	return n * mult, nil
}
