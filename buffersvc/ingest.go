package buffersvc

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

const cycleEnded = schemas.EventCycleEnded

// ingest decodes a fetched batch, dead-letters what is not a record of the
// run, and stores the rest in one synced commit; the messages are acked
// (by ConsumeBatch) only after it returns.
func (s *Service) ingest(_ context.Context, msgs []jetstream.Msg) []error {
	results := make([]error, len(msgs))
	entries := make([]Entry, 0, len(msgs))
	idx := make([]int, 0, len(msgs))
	for i, msg := range msgs {
		e, err := s.decodeEntry(msg.Data())
		if err != nil {
			s.dead.Add(1)
			s.cfg.Logger.Warn("buffersvc: rejected record", "subject", msg.Subject(), "err", err)
			results[i] = streams.Reject(err)
			continue
		}
		entries, idx = append(entries, e), append(idx, i)
	}
	if len(entries) == 0 {
		return results
	}
	res, err := s.store.Put(entries)
	if err != nil {
		for _, i := range idx {
			results[i] = err
		}
		return results
	}
	s.batches.Add(1)
	s.stored.Add(int64(res.Stored))
	s.replaced.Add(int64(res.Replaced))
	s.dropped.Add(int64(res.Dropped))
	return results
}

// decodeEntry decodes one swapped message into a store entry of the run.
func (s *Service) decodeEntry(data []byte) (Entry, error) {
	t, err := schemas.DecodeTrajectory(data)
	if err != nil {
		return Entry{}, err
	}
	if t.Run != s.cfg.Run {
		return Entry{}, fmt.Errorf("%w: %s belongs to run %q, not %q", ErrNotRecord, t.ID, t.Run, s.cfg.Run)
	}
	return EntryOf(t, data)
}

// clear handles a cycle.ended event: it deletes the cycles that no longer
// need to be kept.
func (s *Service) clear(_ context.Context, msg jetstream.Msg) error {
	e, err := schemas.DecodeEvent(msg.Data())
	if err != nil {
		return streams.Reject(err)
	}
	if e.Type != cycleEnded || e.Run != s.cfg.Run {
		return streams.Rejectf("buffersvc: %s event of run %q on %s", e.Type, e.Run, msg.Subject())
	}
	through := e.Cycle - int64(s.cfg.KeepCycles)
	if err := s.store.ClearThrough(s.cfg.Run, through); err != nil {
		return fmt.Errorf("buffersvc: clear through cycle %d: %w", through, err)
	}
	s.cfg.Logger.Info("buffersvc: cleared", "run", s.cfg.Run, "cycle_ended", e.Cycle, "through", through)
	return nil
}
