package swappersvc

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// planBook holds the cycle plans of one run, read from its learner's
// cycle.started events: a cycle's plan says whether its trajectories are
// verified and in which environment options. Only the events the
// learner's cycle record holds are plans (streams.CycleGate,
// schemas.CycleRecord.Check): a forged cycle.started — another plan for a
// cycle in progress (verification off, other options), or any number of
// far cycles — is passed over (the buffer dead-letters it). The explorer
// publishes a cycle's trajectories only after the learner recorded and
// announced the cycle, so a trajectory's plan is on the bus before the
// trajectory is.
type planBook struct {
	js   jetstream.JetStream
	run  string
	gate *streams.CycleGate

	log *slog.Logger

	mu    sync.Mutex
	plans map[int64]schemas.CyclePlan
	next  uint64 // the RSPO_CTRL sequence the next read starts at
	// reread are the cycles whose plan was looked for on the whole subject
	// already: a cycle whose event is not on the bus is not read for again
	// at every batch.
	reread  map[int64]bool
	ignored int // cycle.started messages that were no plan of the run
}

// keptPlans is how many of the latest recorded cycles' plans the book
// keeps: trajectories of older cycles come only as redeliveries.
const keptPlans = 8

func newPlanBook(js jetstream.JetStream, run string, log *slog.Logger) *planBook {
	return &planBook{js: js, run: run, gate: streams.NewCycleGate(js, run), log: log,
		plans: map[int64]schemas.CyclePlan{}, next: 1, reread: map[int64]bool{}}
}

// get returns the plan of cycle, if one was announced and read.
func (b *planBook) get(cycle int64) (schemas.CyclePlan, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.plans[cycle]
	return p, ok
}

// count is the number of cycles with a plan read.
func (b *planBook) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.plans)
}

// load makes sure the plans of cycles are read: when one the learner
// recorded is not known yet, it reads the cycle.started events announced
// since the last read (one read per batch at most), and the whole subject
// once if the plan is still missing. A cycle with no plan of the learner
// on the bus stays unknown; the caller treats its trajectories by the
// service's own configuration.
func (b *planBook) load(ctx context.Context, cycles []int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	missing := b.missing(cycles)
	if len(missing) == 0 {
		return nil
	}
	rec, err := b.gate.Record(ctx, missing[len(missing)-1])
	if err != nil {
		return fmt.Errorf("swappersvc: %w", err)
	}
	if !b.recorded(rec, missing) {
		if len(b.plans) == 0 && rec.Latest() >= 0 {
			// none of the batch's cycles is recorded, but the learner's
			// record holds others: read their plans, so that a batch of
			// only such records is known for one published ahead of its
			// cycle (count), not taken for a planless run's
			return b.read(ctx, rec, b.next, nil)
		}
		return nil
	}
	if err := b.read(ctx, rec, b.next, missing); err != nil {
		return err
	}
	var again bool
	for _, c := range b.missing(missing) {
		if _, ok := rec.StartedCycle(c); ok && !b.reread[c] {
			b.reread[c], again = true, true
		}
	}
	if again {
		return b.read(ctx, rec, 1, missing)
	}
	return nil
}

// missing returns the cycles of cycles whose plan is not known, in
// increasing order.
func (b *planBook) missing(cycles []int64) []int64 {
	var out []int64
	for _, c := range cycles {
		if _, ok := b.plans[c]; !ok {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// recorded reports whether rec holds any of cycles.
func (b *planBook) recorded(rec schemas.CycleRecord, cycles []int64) bool {
	for _, c := range cycles {
		if _, ok := rec.StartedCycle(c); ok {
			return true
		}
	}
	return false
}

// read takes in the learner's cycle.started events from sequence from on
// and keeps the plans of the latest keptPlans cycles rec holds, and of
// the cycles of want, which a batch in hand needs.
func (b *planBook) read(ctx context.Context, rec schemas.CycleRecord, from uint64, want []int64) error {
	err := streams.Replay(ctx, b.js, streams.ReplayOptions{Run: b.run, Subject: streams.CtrlKind(schemas.EventCycleStarted),
		FromSeq: from}, func(m streams.Message) error {
		b.next = max(b.next, m.Seq+1)
		var plan schemas.CyclePlan
		err := m.Err
		if err == nil && m.Event.Run != b.run {
			err = fmt.Errorf("event of run %q", m.Event.Run)
		}
		if err == nil {
			err = rec.Check(*m.Event)
		}
		if err == nil {
			plan, err = schemas.CyclePlanOf(*m.Event)
		}
		if err != nil { // its cycle has no plan here
			b.ignored++
			b.log.Debug("swappersvc: passing over a cycle.started that is no plan of the run's learner", "seq", m.Seq, "err", err)
			return nil
		}
		b.plans[m.Event.Cycle] = plan
		return nil
	})
	if err != nil {
		return fmt.Errorf("swappersvc: read cycle plans of run %s: %w", b.run, err)
	}
	for c := range b.plans {
		if c <= rec.Latest()-keptPlans && !slices.Contains(want, c) {
			delete(b.plans, c)
		}
	}
	for c := range b.reread {
		if c <= rec.Latest()-keptPlans {
			delete(b.reread, c)
		}
	}
	return nil
}
