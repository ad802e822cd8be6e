package buffersvc

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// maxTaskIDLen bounds a task id so it fits the task index's length prefix.
const maxTaskIDLen = math.MaxUint16

// Entry is one buffer record: the keys the store orders and accounts by, and
// the record itself (the swapped trajectory as Arrow IPC, stored verbatim).
type Entry struct {
	Run   string
	Cycle int64
	// ID is the trajectory id; (Run, Cycle, ID) is the record's identity.
	ID     string
	TaskID string
	// Reward is the outcome reward, the first priority key (higher first).
	Reward float64
	// Distinct is the number of distinct states (more first).
	Distinct int32
	// Repeats is the number of repeated state visits (fewer first).
	Repeats int32
	// Success is counted in the statistics.
	Success bool
	// Data is the record's wire form.
	Data []byte
}

// Validate reports every problem with the entry, joined, each wrapping
// ErrInvalidEntry.
func (e Entry) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: %s", ErrInvalidEntry, fmt.Sprintf(format, args...)))
	}
	if e.Run == "" || strings.IndexByte(e.Run, 0) >= 0 {
		bad("run %q must be non-empty and free of NUL bytes", e.Run)
	}
	if e.ID == "" {
		bad("empty id")
	}
	if e.Cycle < 0 {
		bad("cycle %d is negative", e.Cycle)
	}
	if len(e.TaskID) > maxTaskIDLen {
		bad("task id is %d bytes, at most %d", len(e.TaskID), maxTaskIDLen)
	}
	if math.IsNaN(e.Reward) || math.IsInf(e.Reward, 0) {
		bad("reward %v is not finite", e.Reward)
	}
	if e.Distinct < 0 || e.Repeats < 0 {
		bad("negative state counts (distinct %d, repeats %d)", e.Distinct, e.Repeats)
	}
	return errors.Join(errs...)
}
