package schemas

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// MaxRecordedCycles is how many of the latest started cycles a
// CycleRecord keeps: the plans any stage may still need (an explorer's
// straggling shard, a swapper's redelivered trajectory) are those of the
// last few cycles, and a reader more than this many cycles behind cannot
// check an event of an older cycle any more.
const MaxRecordedCycles = 64

// CycleRecord is the learner's own account of its RSPO cycles: which
// cycles it started, at which policy version, with which cycle.started
// event, and the last cycle it ended. The learner writes it to the state
// bucket (<run>.learner.cycles) before it publishes each cycle event, so
// a stage that reads a cycle event and then the record finds the event in
// it, and an event the record does not hold is none of the learner's: a
// forged cycle.started or cycle.ended, whatever its cycle number, cannot
// move a stage's idea of the learner's cycle (CycleRecord.Check).
//
// The record pins each started cycle's event by its digest (EventDigest),
// so the check gives the same answer however late it is made: a
// cycle.started published before the learner's own for the same cycle,
// with another plan, never matches, and a resumed learner's announcement
// of the same cycle again does. It travels as JSON.
type CycleRecord struct {
	Run string `json:"run"`
	// Ended is the last cycle the learner ended, -1 before the first.
	Ended int64 `json:"ended"`
	// Started are the latest cycles the learner started, at most
	// MaxRecordedCycles of them, in increasing cycle order.
	Started []StartedCycle `json:"started"`
}

// StartedCycle is one cycle.started event of the learner.
type StartedCycle struct {
	Cycle         int64 `json:"cycle"`
	PolicyVersion int64 `json:"policy_version"`
	// Event is the event's EventDigest.
	Event string `json:"event"`
}

// NewCycleRecord is the record of a learner that has started no cycle.
func NewCycleRecord(run string) CycleRecord { return CycleRecord{Run: run, Ended: -1} }

// Latest is the last cycle the learner started, -1 before the first.
func (r CycleRecord) Latest() int64 {
	if len(r.Started) == 0 {
		return -1
	}
	return r.Started[len(r.Started)-1].Cycle
}

// Oldest is the oldest cycle the record still holds, -1 when it holds none.
func (r CycleRecord) Oldest() int64 {
	if len(r.Started) == 0 {
		return -1
	}
	return r.Started[0].Cycle
}

// StartedCycle returns the record of cycle c's cycle.started, if held.
func (r CycleRecord) StartedCycle(c int64) (StartedCycle, bool) {
	i, ok := slices.BinarySearchFunc(r.Started, c, func(s StartedCycle, c int64) int { return compareInt(s.Cycle, c) })
	if !ok {
		return StartedCycle{}, false
	}
	return r.Started[i], true
}

// WithStarted returns the record with e, a cycle.started of the run,
// recorded as its cycle's (replacing what was recorded for that cycle)
// and the oldest cycles dropped beyond MaxRecordedCycles.
func (r CycleRecord) WithStarted(e Event) CycleRecord {
	s := StartedCycle{Cycle: e.Cycle, PolicyVersion: e.PolicyVersion, Event: EventDigest(e)}
	started := slices.Clone(r.Started)
	i, ok := slices.BinarySearchFunc(started, e.Cycle, func(s StartedCycle, c int64) int { return compareInt(s.Cycle, c) })
	if ok {
		started[i] = s
	} else {
		started = slices.Insert(started, i, s)
	}
	r.Started = started[max(0, len(started)-MaxRecordedCycles):]
	return r
}

// WithEnded returns the record with cycle c ended (the last ended cycle
// never goes back).
func (r CycleRecord) WithEnded(c int64) CycleRecord {
	r.Ended = max(r.Ended, c)
	return r
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// CycleEventError says why a cycle event is not one the learner's record
// holds.
type CycleEventError struct {
	Type  EventType
	Cycle int64
	// Ahead says the event is beyond the record: the learner had not
	// started (or ended) its cycle when the record was read. A reader
	// whose copy may be stale reads the record again before it refuses.
	Ahead bool
	// Reason says what the record holds instead.
	Reason string
}

func (e *CycleEventError) Error() string {
	return fmt.Sprintf("schemas: %s of cycle %d: not the learner's event: %s", e.Type, e.Cycle, e.Reason)
}

// Check reports whether e, a cycle event of the record's run, is one the
// learner recorded: a cycle.started whose digest is that of its cycle's
// recorded event, or a cycle.ended of a cycle the learner has ended. Any
// other answer is a *CycleEventError (or a ValidationError for an event
// of another type or run).
func (r CycleRecord) Check(e Event) error {
	if e.Run != r.Run {
		return &ValidationError{Field: "run", Reason: fmt.Sprintf("event of run %q checked against the record of run %q", e.Run, r.Run)}
	}
	refuse := func(ahead bool, format string, args ...any) error {
		return &CycleEventError{Type: e.Type, Cycle: e.Cycle, Ahead: ahead, Reason: fmt.Sprintf(format, args...)}
	}
	switch e.Type {
	case EventCycleEnded:
		if e.Cycle > r.Ended {
			return refuse(true, "the learner has ended cycles only through %d", r.Ended)
		}
		return nil
	case EventCycleStarted:
	default:
		return &ValidationError{Field: "type", Reason: fmt.Sprintf("%s is no cycle event", e.Type)}
	}
	s, ok := r.StartedCycle(e.Cycle)
	switch {
	case e.Cycle > r.Latest():
		return refuse(true, "the learner has started cycles only through %d", r.Latest())
	case !ok && e.Cycle < r.Oldest():
		return refuse(false, "the learner's record holds cycles %d..%d only: too old to check", r.Oldest(), r.Latest())
	case !ok:
		return refuse(false, "the learner did not start cycle %d", e.Cycle)
	case s.PolicyVersion != e.PolicyVersion:
		return refuse(false, "the learner started it at policy version %d, not %d", s.PolicyVersion, e.PolicyVersion)
	case s.Event != EventDigest(e):
		return refuse(false, "the learner started it with another plan (event digest %.12s…, not %.12s…)", s.Event, EventDigest(e))
	}
	return nil
}

// EventDigest is the SHA-256, in hex, of e's JSON wire form without its
// time: the same for the event a service publishes and the event a
// reader decodes from the bus, and for an event announced again after a
// restart.
func EventDigest(e Event) string {
	e.Time = time.Time{}
	b, err := json.Marshal(e)
	if err != nil { // only a Config that is not JSON, which no decoded event has
		b = fmt.Appendf(nil, "%#v", e)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Validate reports whether the record is well formed: a run, at most
// MaxRecordedCycles started cycles in increasing order, each with a
// policy version and a digest, and a last ended cycle of -1 or more. (A
// learner that resumed a cycle an older learner started may end cycles
// its record does not hold.)
func (r CycleRecord) Validate() error {
	if err := CheckRunName(r.Run); err != nil {
		return err
	}
	if len(r.Started) > MaxRecordedCycles {
		return &ValidationError{Field: "started", Reason: fmt.Sprintf("%d cycles, at most %d", len(r.Started), MaxRecordedCycles)}
	}
	for i, s := range r.Started {
		field := fmt.Sprintf("started[%d]", i)
		switch {
		case s.Cycle < 0 || s.PolicyVersion < 0:
			return &ValidationError{Field: field, Reason: fmt.Sprintf("cycle %d, policy version %d: negative", s.Cycle, s.PolicyVersion)}
		case i > 0 && s.Cycle <= r.Started[i-1].Cycle:
			return &ValidationError{Field: field, Reason: fmt.Sprintf("cycle %d after cycle %d: want increasing cycles", s.Cycle, r.Started[i-1].Cycle)}
		case !isDigest(s.Event):
			return &ValidationError{Field: field + ".event", Reason: fmt.Sprintf("%q is not a SHA-256 in hex", s.Event)}
		}
	}
	if r.Ended < -1 {
		return &ValidationError{Field: "ended", Reason: fmt.Sprintf("%d: want a cycle, or -1 for none ended", r.Ended)}
	}
	return nil
}

// isDigest reports whether s is 64 lower-case hex digits.
func isDigest(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// EncodeCycleRecord returns the JSON wire form of r after validating it.
func EncodeCycleRecord(r CycleRecord) ([]byte, error) { return encodeValidated(r) }

// DecodeCycleRecord parses and validates a learner's cycle record.
func DecodeCycleRecord(b []byte) (CycleRecord, error) {
	return decodeValidated[CycleRecord](b, "cycle record")
}
