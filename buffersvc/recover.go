package buffersvc

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/streams"
)

// recoverLostStore rebuilds the store from RSPO_SWAPPED when it holds
// nothing of the run — no record, nothing ever cleared — while the
// buffer's durable consumer has already acknowledged records: the store's
// directory was lost (a new disk, a wiped volume). Without this the buffer
// would restart silently empty and serve no records for the cycles it had
// already ingested. A rebuild of a store that really was empty is
// harmless: it stores what the stream holds, which is what the consumer
// would have stored.
func (s *Service) recoverLostStore(ctx context.Context) error {
	st, err := s.store.Stats(s.cfg.Run)
	if err != nil {
		return err
	}
	if st.Records > 0 || st.ClearedThrough >= 0 {
		return nil
	}
	cons, err := s.js.Consumer(ctx, streams.StreamSwapped, s.cfg.Durable)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		return nil // a new buffer: nothing was ingested anywhere
	}
	if err != nil {
		return fmt.Errorf("buffersvc: consumer %s: %w", s.cfg.Durable, err)
	}
	info := cons.CachedInfo()
	if info == nil || info.AckFloor.Stream == 0 {
		return nil
	}
	s.cfg.Logger.Warn("buffersvc: the store holds nothing but the consumer has acknowledged records: rebuilding from the stream",
		"run", s.cfg.Run, "consumer", s.cfg.Durable, "acked_through_seq", info.AckFloor.Stream)
	res, err := Rebuild(ctx, s.js, s.store, s.cfg.Run, s.cfg.KeepCycles)
	if err != nil {
		return fmt.Errorf("buffersvc: rebuild a lost store: %w", err)
	}
	s.cfg.Logger.Warn("buffersvc: store rebuilt", "run", s.cfg.Run, "read", res.Read, "stored", res.Put.Stored,
		"dropped", res.Put.Dropped, "cleared_through", res.ClearedThrough)
	return nil
}
