package buffersvc

import (
	"context"
	"fmt"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

const cycleEnded = schemas.EventCycleEnded

// ingest stores a fetched batch of the run's records (streams.TypedBatch
// has decoded them and dead-lettered the rest) in one synced commit; the
// messages are acked (by ConsumeBatch) only after it returns.
func (s *Service) ingest(_ context.Context, ds []streams.Delivery[*schemas.Trajectory]) []error {
	results := make([]error, len(ds))
	entries := make([]Entry, 0, len(ds))
	idx := make([]int, 0, len(ds))
	for i, d := range ds {
		e, err := EntryOf(d.Value, d.Msg.Data())
		if err != nil {
			results[i] = streams.Reject(err)
			continue
		}
		entries, idx = append(entries, e), append(idx, i)
	}
	if len(entries) == 0 {
		return results
	}
	s.healing.RLock() // a heal swaps the store: nothing may land in the old one
	defer s.healing.RUnlock()
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
	if res.Dropped > 0 {
		mark, _ := s.store.ClearedThrough(s.cfg.Run)
		s.cfg.Logger.Warn("buffersvc: dropped records of cleared cycles", "run", s.cfg.Run,
			"dropped", res.Dropped, "cleared_through", mark, "dropped_total", s.dropped.Load())
	}
	return results
}

// clear handles a cycle.ended event of the run: it deletes the cycles that
// no longer need to be kept.
func (s *Service) clear(ctx context.Context, d streams.Delivery[schemas.Event]) error {
	e := d.Value
	if e.Type != cycleEnded {
		return streams.Rejectf("buffersvc: %s event on %s", e.Type, d.Msg.Subject())
	}
	s.healing.RLock()
	defer s.healing.RUnlock()
	if err := s.checkCycleEvent(ctx, e); err != nil {
		return err
	}
	through := e.Cycle - int64(s.cfg.KeepCycles)
	if err := s.store.ClearThrough(s.cfg.Run, through); err != nil {
		return fmt.Errorf("buffersvc: clear through cycle %d: %w", through, err)
	}
	s.cfg.Logger.Info("buffersvc: cleared", "run", s.cfg.Run, "cycle_ended", e.Cycle, "through", through)
	return nil
}
