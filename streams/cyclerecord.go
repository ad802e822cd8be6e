package streams

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
)

// CycleRecordKey is the state key of a run's cycle record
// (schemas.CycleRecord), which only the run's learner writes:
// <run>.learner.cycles.
func CycleRecordKey(run string) string { return StateKey(run, "learner", "cycles") }

// LoadCycleRecord reads run's cycle record: schemas.NewCycleRecord(run)
// while its learner has recorded no cycle. A record that does not decode
// is an error: no cycle event can be checked against it.
func LoadCycleRecord(ctx context.Context, js jetstream.JetStream, run string) (schemas.CycleRecord, error) {
	kv, err := State(ctx, js)
	if err != nil {
		return schemas.CycleRecord{}, err
	}
	entry, err := kv.Get(ctx, CycleRecordKey(run))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return schemas.NewCycleRecord(run), nil
	}
	if err != nil {
		return schemas.CycleRecord{}, fmt.Errorf("streams: read the cycle record of run %s: %w", run, err)
	}
	r, err := schemas.DecodeCycleRecord(entry.Value())
	if err == nil && r.Run != run {
		err = fmt.Errorf("it names run %q", r.Run)
	}
	if err != nil {
		return schemas.CycleRecord{}, fmt.Errorf("streams: the cycle record of run %s is corrupt: %w", run, err)
	}
	return r, nil
}

// AnnounceCycle is how a learner publishes a cycle.started or cycle.ended
// event e of its run: it records e in the run's cycle record first and
// publishes it second, so any stage that has read the event finds it in
// the record it reads next (CycleGate). A learner that announces the same
// event again after a restart rewrites the same record. An event stored
// before under e's message id that is not e (a forgery that took the id
// ahead of the learner) does not make e a duplicate: e is published again
// under an id of its own (reannounce).
func AnnounceCycle(ctx context.Context, js jetstream.JetStream, e schemas.Event) (*jetstream.PubAck, error) {
	r, err := LoadCycleRecord(ctx, js, e.Run)
	if err != nil {
		return nil, err
	}
	switch e.Type {
	case schemas.EventCycleStarted:
		r = r.WithStarted(e)
	case schemas.EventCycleEnded:
		r = r.WithEnded(e.Cycle)
	default:
		return nil, fmt.Errorf("streams: announce a %s event: not a cycle event", e.Type)
	}
	b, err := schemas.EncodeCycleRecord(r)
	if err != nil {
		return nil, fmt.Errorf("streams: record %s of cycle %d: %w", e.Type, e.Cycle, err)
	}
	kv, err := State(ctx, js)
	if err != nil {
		return nil, err
	}
	if _, err := kv.Put(ctx, CycleRecordKey(e.Run), b); err != nil {
		return nil, fmt.Errorf("streams: record %s of cycle %d: %w", e.Type, e.Cycle, err)
	}
	ack, err := PublishEvent(ctx, js, e)
	if err != nil || !ack.Duplicate {
		return ack, err
	}
	return reannounce(ctx, js, e, ack)
}

// reannounce reads back the event stored under e's message id (ack, a
// duplicate's acknowledgement) and, unless it is e (the same digest: the
// learner's own, announced before a restart), publishes e again under
// EventID(e) followed by its digest. A cycle event's id is derived from
// fields anyone can guess: a forgery published under the id of the
// learner's next cycle.started, ahead of it, used to have JetStream drop
// the learner's as a duplicate, and no stage found the event the record
// holds.
func reannounce(ctx context.Context, js jetstream.JetStream, e schemas.Event, ack *jetstream.PubAck) (*jetstream.PubAck, error) {
	str, err := js.Stream(ctx, StreamCtrl)
	if err != nil {
		return nil, fmt.Errorf("streams: control stream: %w", err)
	}
	msg, err := str.GetMsg(ctx, ack.Sequence)
	if err != nil {
		return nil, fmt.Errorf("streams: read back %s of cycle %d: %w", e.Type, e.Cycle, err)
	}
	digest := schemas.EventDigest(e)
	if stored, err := schemas.DecodeEvent(msg.Data); err == nil && schemas.EventDigest(stored) == digest {
		return ack, nil
	}
	return publishEvent(ctx, js, e, EventID(e)+"/"+digest[:16])
}

// CycleGate checks a run's cycle events against its learner's cycle
// record (schemas.CycleRecord.Check) for the stages that act on them. It
// keeps the copy of the record it read last and reads it again when an
// event is beyond it: the learner records an event before publishing it,
// so an event the fresh record does not hold was not the learner's. It is
// safe for concurrent use.
type CycleGate struct {
	js  jetstream.JetStream
	run string

	mu     sync.Mutex
	rec    schemas.CycleRecord
	loaded bool
}

// NewCycleGate returns a gate for run's cycle events.
func NewCycleGate(js jetstream.JetStream, run string) *CycleGate {
	return &CycleGate{js: js, run: run}
}

// cycleConfirmPauses are the pauses before reading the record again when
// an event is one cycle beyond a fresh copy: in a cluster the copy may
// come from a replica a write behind (direct gets are served by any
// replica), and the learner's next event is what such a lag would hide.
// An event further ahead is refused on the first fresh read.
var cycleConfirmPauses = []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}

// Check returns nil for a cycle event e of the gate's run that the
// learner recorded, a *schemas.CycleEventError saying why e is not the
// learner's, or another error when the record cannot be read (worth a
// retry).
func (g *CycleGate) Check(ctx context.Context, e schemas.Event) error {
	if r, ok := g.held(); ok {
		if err := r.Check(e); !isAhead(err) {
			return err
		}
	}
	for try := 0; ; try++ {
		r, err := g.read(ctx)
		if err != nil {
			return err
		}
		if err := r.Check(e); !isAhead(err) || try == len(cycleConfirmPauses) || !oneAhead(r, e) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(cycleConfirmPauses[try]):
		}
	}
}

// Record returns the learner's record as last read, read again unless the
// copy already holds cycle through as started.
func (g *CycleGate) Record(ctx context.Context, through int64) (schemas.CycleRecord, error) {
	if r, ok := g.held(); ok && r.Latest() >= through {
		return r, nil
	}
	return g.read(ctx)
}

// held returns the gate's copy of the record, if it has read one.
func (g *CycleGate) held() (schemas.CycleRecord, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.rec, g.loaded
}

// read reads the record and keeps it as the gate's copy.
func (g *CycleGate) read(ctx context.Context) (schemas.CycleRecord, error) {
	r, err := LoadCycleRecord(ctx, g.js, g.run)
	if err != nil {
		return r, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.rec, g.loaded = r, true
	return r, nil
}

// isAhead reports whether err refuses an event as beyond the record.
func isAhead(err error) bool {
	var ce *schemas.CycleEventError
	return errors.As(err, &ce) && ce.Ahead
}

// oneAhead reports whether e is the learner's next cycle event after r:
// the one a replica's lag could hide.
func oneAhead(r schemas.CycleRecord, e schemas.Event) bool {
	if e.Type == schemas.EventCycleEnded {
		return e.Cycle == r.Ended+1
	}
	return e.Cycle == r.Latest()+1
}
