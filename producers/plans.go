package producers

import (
	"context"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// cyclePlans finds the cycle.started event an explore shard belongs to:
// the one the learner's cycle record holds for the shard's cycle
// (streams.CycleGate, schemas.CycleRecord.Check), matched by its digest.
// Anything else on the subject — a forged cycle.started with a far cycle
// number, or another plan for a cycle the learner started — is passed
// over: it neither becomes a plan nor pushes the learner's plans out (a
// far cycle number once emptied the cache, and every real shard after it
// was dead-lettered). The learner records and announces a cycle before it
// queues the cycle's shards, so the event is on the bus when a shard
// arrives; the plans of the latest keptCycles cycles found are kept, and
// a lookup of another reads the events announced since the last read, or
// the whole subject again when the learner's event was passed over while
// this explorer's copy of the record was behind.
type cyclePlans struct {
	js   jetstream.JetStream
	run  string
	gate *streams.CycleGate

	mu      sync.Mutex
	started map[int64]schemas.Event // the learner's cycle.started events found, by cycle
	next    uint64                  // the RSPO_CTRL sequence the next read starts at
}

// keptCycles is how many of the latest cycles' plans cyclePlans keeps. The
// learner waits for every shard of a cycle before it starts the next, so
// only a shard of a cycle it gave up waiting for can be older; its plan is
// read again from the bus, if the learner's record still holds the cycle.
const keptCycles = 8

func newCyclePlans(js jetstream.JetStream, run string) *cyclePlans {
	return &cyclePlans{js: js, run: run, gate: streams.NewCycleGate(js, run), started: map[int64]schemas.Event{}, next: 1}
}

// get returns the learner's cycle.started event of cycle, which must have
// started π_B at policyVersion, and its plan. A shard that cannot be the
// learner's (a cycle its record no longer holds, another policy version)
// or whose plan does not decode is a streams.RejectError; a cycle the
// learner has not recorded, or whose event is not on the bus, is an
// ordinary error, so the shard is retried (and dead-lettered once its
// deliveries run out).
func (b *cyclePlans) get(ctx context.Context, cycle, policyVersion int64) (schemas.Event, schemas.CyclePlan, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	rec, err := b.gate.Record(ctx, cycle)
	if err != nil {
		return schemas.Event{}, schemas.CyclePlan{}, fmt.Errorf("producers: %w", err)
	}
	s, ok := rec.StartedCycle(cycle)
	switch {
	case !ok && cycle > rec.Latest():
		return schemas.Event{}, schemas.CyclePlan{}, fmt.Errorf("producers: the learner of run %s has not started cycle %d (its record goes to cycle %d)", b.run, cycle, rec.Latest())
	case !ok:
		return schemas.Event{}, schemas.CyclePlan{}, streams.Rejectf("producers: the learner's record of run %s holds cycles %d..%d, not cycle %d: no plan to explore it by", b.run, rec.Oldest(), rec.Latest(), cycle)
	case s.PolicyVersion != policyVersion:
		return schemas.Event{}, schemas.CyclePlan{}, streams.Rejectf("producers: a shard of cycle %d for policy version %d, but the learner started the cycle at version %d", cycle, policyVersion, s.PolicyVersion)
	}
	e, err := b.find(ctx, rec, cycle)
	if err != nil {
		return schemas.Event{}, schemas.CyclePlan{}, err
	}
	plan, err := schemas.CyclePlanOf(e)
	if err != nil {
		return e, plan, streams.Reject(fmt.Errorf("producers: plan of cycle %d: %w", cycle, err))
	}
	return e, plan, nil
}

// find returns the learner's cycle.started of cycle as rec holds it: from
// the plans kept, from the events announced since the last read, or from
// the whole subject.
func (b *cyclePlans) find(ctx context.Context, rec schemas.CycleRecord, cycle int64) (schemas.Event, error) {
	for _, from := range []uint64{0, b.next, 1} {
		if from > 0 {
			if err := b.read(ctx, rec, from, cycle); err != nil {
				return schemas.Event{}, err
			}
		}
		if e, ok := b.started[cycle]; ok && rec.Check(e) == nil {
			return e, nil
		}
	}
	return schemas.Event{}, fmt.Errorf("producers: no cycle.started of cycle %d on the bus matches the learner's record", cycle)
}

// read takes in the learner's cycle.started events from sequence from on:
// those rec holds. Anything else — no event of the run, or an event the
// learner did not send — is passed over (the buffer dead-letters the
// forgeries). Only the latest keptCycles cycles' plans are kept, and the
// plan of cycle want, being looked for.
func (b *cyclePlans) read(ctx context.Context, rec schemas.CycleRecord, from uint64, want int64) error {
	err := streams.Replay(ctx, b.js, streams.ReplayOptions{Run: b.run, Subject: streams.CtrlKind(schemas.EventCycleStarted),
		FromSeq: from}, func(m streams.Message) error {
		b.next = max(b.next, m.Seq+1)
		if m.Event != nil && m.Event.Run == b.run && rec.Check(*m.Event) == nil {
			b.started[m.Event.Cycle] = *m.Event
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("producers: read cycle plans of run %s: %w", b.run, err)
	}
	for c := range b.started {
		if c <= rec.Latest()-keptCycles && c != want {
			delete(b.started, c)
		}
	}
	return nil
}
