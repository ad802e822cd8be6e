package buffersvc

import (
	"context"
	"errors"
	"fmt"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// checkCycleEvent refuses a cycle event the run's learner did not record
// (streams.CycleGate): a cycle.ended of a cycle it has not ended — with a
// far cycle number it used to wipe the buffer and drop every later record
// as already cleared, even when a forged cycle.started of that cycle came
// first — or a cycle.started it did not send. A record that cannot be
// read is an error to retry on.
func (s *Service) checkCycleEvent(ctx context.Context, e schemas.Event) error {
	err := s.gate.Check(ctx, e)
	var ce *schemas.CycleEventError
	if errors.As(err, &ce) {
		return streams.Reject(fmt.Errorf("buffersvc: %w", err))
	}
	return err
}

// audit checks a cycle.started event of the run against its learner's
// record and dead-letters one the learner did not send, so a forged
// cycle.started is on the dead-letter stream with its reason. (The
// explorers and the swapper, which read the events for their plans, pass
// over it by the same check.) An event of a cycle older than the record
// holds can no longer be checked; no stage uses its plan, and it is
// acknowledged with a warning.
func (s *Service) audit(ctx context.Context, d streams.Delivery[schemas.Event]) error {
	e := d.Value
	if e.Type != schemas.EventCycleStarted {
		return streams.Rejectf("buffersvc: %s event on %s", e.Type, d.Msg.Subject())
	}
	err := s.checkCycleEvent(ctx, e)
	if rec, _ := s.gate.Record(ctx, e.Cycle); err != nil && e.Cycle < rec.Oldest() {
		s.cfg.Logger.Warn("buffersvc: a cycle.started older than the learner's record cannot be checked", "run", s.cfg.Run,
			"cycle", e.Cycle, "oldest_recorded", rec.Oldest())
		return nil
	}
	return err
}
