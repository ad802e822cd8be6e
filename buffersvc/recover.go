package buffersvc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/streams"
)

// reconcileWithLog rebuilds the store from RSPO_SWAPPED when it holds
// nothing of the run — no record, nothing ever cleared — while the
// buffer's durable consumer has already acknowledged records: the store's
// directory was lost (a new disk, a wiped volume). Without this the buffer
// would restart silently empty and serve no records for the cycles it had
// already ingested. A rebuild of a store that really was empty is
// harmless: it stores what the stream holds, which is what the consumer
// would have stored.
//
// The other way round, a store that holds the run while the bus has no
// consumer of it outlived the run's log: the bus's store was wiped or
// replaced (a user deleting a data directory's nats/ to free space, then
// training the same run name again). Its records and clearing watermark
// belong to another life of the run — kept, they dropped every record of
// the new run's first cycles as "already cleared", and the learner waited
// out its buffer timeout and trained without the buffer. The store
// is rebuilt from what the log holds of the run (usually nothing yet), as
// a lost store is, which replaces everything it held of the run.
func (s *Service) reconcileWithLog(ctx context.Context) error {
	st, err := s.store.Stats(s.cfg.Run)
	if err != nil {
		return err
	}
	cons, err := s.js.Consumer(ctx, streams.StreamSwapped, s.cfg.Durable)
	holds := st.Records > 0 || st.ClearedThrough >= 0
	switch {
	case errors.Is(err, jetstream.ErrConsumerNotFound) && holds:
		s.cfg.Logger.Warn("buffersvc: the store holds the run but the bus has no consumer of it (its store was wiped or replaced): forgetting the run and rebuilding from the log",
			"run", s.cfg.Run, "consumer", s.cfg.Durable, "records", st.Records, "cleared_through", st.ClearedThrough)
		return s.rebuild(ctx) // aside: the rebuilt store holds nothing of the old life
	case errors.Is(err, jetstream.ErrConsumerNotFound):
		return nil // a new buffer: nothing was ingested anywhere
	case err != nil:
		return fmt.Errorf("buffersvc: consumer %s: %w", s.cfg.Durable, err)
	case holds:
		return nil
	}
	info := cons.CachedInfo()
	if info == nil || info.AckFloor.Stream == 0 {
		return nil
	}
	s.cfg.Logger.Warn("buffersvc: the store holds nothing but the consumer has acknowledged records: rebuilding from the stream",
		"run", s.cfg.Run, "consumer", s.cfg.Durable, "acked_through_seq", info.AckFloor.Stream)
	return s.rebuild(ctx)
}

// rebuild replays the run's log into a fresh store beside the service's
// and swaps it in only once it is complete (Store.rebuildAside): a
// rebuild cut short (a full disk, a crash) leaves the store as it was,
// and the next start rebuilds again.
func (s *Service) rebuild(ctx context.Context) error {
	var res RebuildResult
	err := s.store.rebuildAside(s.cfg.Run, func(fresh *Store) (err error) {
		res, err = Rebuild(ctx, s.js, fresh, s.cfg.Run, s.cfg.KeepCycles)
		return err
	})
	if err != nil {
		return fmt.Errorf("buffersvc: rebuild the store from the log: %w", err)
	}
	s.cfg.Logger.Warn("buffersvc: store rebuilt", "run", s.cfg.Run, "read", res.Read, "stored", res.Put.Stored,
		"dropped", res.Put.Dropped, "cleared_through", res.ClearedThrough)
	if g := res.Gaps; g.Missing() > 0 {
		s.cfg.Logger.Warn("buffersvc: the swapped stream lost records: the rebuilt store lacks them", "run", s.cfg.Run,
			"missing_inside", g.Inside, "missing_tail", g.Tail, "gaps", g.String())
	}
	return nil
}

// healTimeout bounds a heal's rebuild: the sample that met the damage
// waits for it.
const healTimeout = 5 * time.Minute

// heal rebuilds the run's records from the stream beside the damaged
// store and swaps them in (rebuild), with ingest and clearing paused so
// that nothing lands in the files being replaced. It rebuilds the whole
// run, not only the damaged cycle: a damaged sstable may hold any of the
// run's keys, and the stream is the only copy known to be sound. Sample
// counts restart at zero, as after any rebuild.
func (s *Service) heal() error {
	s.healing.Lock()
	defer s.healing.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), healTimeout)
	defer cancel()
	return s.rebuild(ctx)
}
