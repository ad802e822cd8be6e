package swappersvc

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// planBook holds the cycle plans of one run, read from its cycle.started
// events: a cycle's plan says whether its trajectories are verified and in
// which environment options. The explorer publishes a cycle's trajectories
// only after the learner announced the cycle, so a trajectory's plan is
// on the bus before the trajectory is.
type planBook struct {
	js  jetstream.JetStream
	run string

	log *slog.Logger

	mu      sync.Mutex
	plans   map[int64]schemas.CyclePlan
	next    uint64 // the RSPO_CTRL sequence the next read starts at
	ignored int    // cycle.started messages that were no plan of the run
}

func newPlanBook(js jetstream.JetStream, run string, log *slog.Logger) *planBook {
	return &planBook{js: js, run: run, log: log, plans: map[int64]schemas.CyclePlan{}, next: 1}
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

// load makes sure the plans of cycles are read: when one is not known yet,
// it reads the cycle.started events announced since the last read (one
// read per batch at most). A cycle with no plan on the bus stays unknown;
// the caller treats its trajectories by the service's own configuration.
func (b *planBook) load(ctx context.Context, cycles []int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	missing := false
	for _, c := range cycles {
		if _, ok := b.plans[c]; !ok {
			missing = true
			break
		}
	}
	if !missing {
		return nil
	}
	err := streams.Replay(ctx, b.js, streams.ReplayOptions{Run: b.run, Subject: streams.CtrlKind(schemas.EventCycleStarted),
		FromSeq: b.next}, func(m streams.Message) error {
		b.next = m.Seq + 1
		var plan schemas.CyclePlan
		err := m.Err
		if err == nil && m.Event.Run != b.run {
			err = fmt.Errorf("event of run %q", m.Event.Run)
		}
		if err == nil {
			plan, err = schemas.CyclePlanOf(*m.Event)
		}
		if err != nil { // the explorer dead-letters it; its cycle has no plan here
			b.ignored++
			b.log.Warn("swappersvc: ignoring a cycle.started that is not a plan of the run", "seq", m.Seq, "err", err)
			return nil
		}
		b.plans[m.Event.Cycle] = plan
		return nil
	})
	if err != nil {
		return fmt.Errorf("swappersvc: read cycle plans of run %s: %w", b.run, err)
	}
	return nil
}
