package producers

import (
	"context"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// cyclePlans finds the cycle.started event an explore shard belongs to. The
// learner announces a cycle before it queues the cycle's shards, so the
// event is on the bus when a shard arrives; the events of the latest
// keptCycles cycles read so far are kept, and each lookup of an unknown
// cycle reads only the events announced since the last read.
type cyclePlans struct {
	js  jetstream.JetStream
	run string

	mu      sync.Mutex
	started map[startedKey]schemas.Event
	next    uint64 // the RSPO_CTRL sequence the next read starts at
}

// startedKey names a cycle.started event: a learner that resumes a cycle
// announces it again for the same policy version (and the same plan).
type startedKey struct{ cycle, policyVersion int64 }

// keptCycles is how many of the latest cycles' events cyclePlans keeps. The
// learner waits for every shard of a cycle before it starts the next, so
// only a shard of a cycle it gave up waiting for can be older; such a shard
// finds no plan and is dead-lettered after its retries.
const keptCycles = 8

func newCyclePlans(js jetstream.JetStream, run string) *cyclePlans {
	return &cyclePlans{js: js, run: run, started: map[startedKey]schemas.Event{}, next: 1}
}

// get returns the latest cycle.started event of cycle for π_θ version
// policyVersion and its plan. A plan that does not decode is a
// streams.RejectError (no retry mends it); an event not on the bus yet is
// an ordinary error, so the shard is retried.
func (b *cyclePlans) get(ctx context.Context, cycle, policyVersion int64) (schemas.Event, schemas.CyclePlan, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	key := startedKey{cycle, policyVersion}
	e, ok := b.started[key]
	if !ok {
		if err := b.read(ctx); err != nil {
			return schemas.Event{}, schemas.CyclePlan{}, err
		}
		if e, ok = b.started[key]; !ok {
			return schemas.Event{}, schemas.CyclePlan{}, fmt.Errorf("producers: no cycle.started of cycle %d for policy version %d on the bus", cycle, policyVersion)
		}
	}
	plan, err := schemas.CyclePlanOf(e)
	if err != nil {
		return e, plan, streams.Reject(fmt.Errorf("producers: plan of cycle %d: %w", cycle, err))
	}
	return e, plan, nil
}

// read takes in the cycle.started events announced since the last read.
// Messages that are no event of the run are skipped: they name no plan a
// shard of the run can refer to.
func (b *cyclePlans) read(ctx context.Context) error {
	err := streams.Replay(ctx, b.js, streams.ReplayOptions{Run: b.run, Subject: streams.CtrlKind(schemas.EventCycleStarted),
		FromSeq: b.next}, func(m streams.Message) error {
		b.next = m.Seq + 1
		if m.Event != nil && m.Event.Run == b.run && m.Event.Type == schemas.EventCycleStarted {
			b.started[startedKey{m.Event.Cycle, m.Event.PolicyVersion}] = *m.Event
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("producers: read cycle plans of run %s: %w", b.run, err)
	}
	latest := int64(0)
	for k := range b.started {
		latest = max(latest, k.cycle)
	}
	for k := range b.started {
		if k.cycle <= latest-keptCycles {
			delete(b.started, k)
		}
	}
	return nil
}
