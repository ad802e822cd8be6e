package buffersvc

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// latestStartedCycle returns the highest cycle the run's learner has
// started (its latest cycle.started event), or ok = false before the
// first. A cycle.ended beyond it cannot be the learner's: clearing on it
// would wipe the buffer and drop every later record.
func latestStartedCycle(ctx context.Context, js jetstream.JetStream, run string) (cycle int64, ok bool, err error) {
	str, err := js.Stream(ctx, streams.StreamCtrl)
	if err != nil {
		return 0, false, fmt.Errorf("buffersvc: control stream: %w", err)
	}
	msg, err := str.GetLastMsgForSubject(ctx, streams.Subjects(run).Ctrl(schemas.EventCycleStarted))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("buffersvc: latest cycle.started of run %s: %w", run, err)
	}
	e, err := schemas.DecodeEvent(msg.Data)
	if err != nil || e.Run != run {
		return 0, false, fmt.Errorf("buffersvc: latest cycle.started of run %s is not a valid event of the run: %v", run, err)
	}
	return e.Cycle, true, nil
}

// checkCycleEnded refuses a cycle.ended the run's learner cannot have
// sent: a negative cycle, or one it has not started yet.
func checkCycleEnded(ctx context.Context, js jetstream.JetStream, e schemas.Event) error {
	if e.Cycle < 0 {
		return streams.Rejectf("buffersvc: cycle.ended of cycle %d", e.Cycle)
	}
	latest, ok, err := latestStartedCycle(ctx, js, e.Run)
	if err != nil {
		return err // retried: the control stream may be briefly unavailable
	}
	if !ok || e.Cycle > latest {
		return streams.Rejectf("buffersvc: cycle.ended of cycle %d, but the learner of run %s has started cycles only through %d: not the learner's event",
			e.Cycle, e.Run, latest)
	}
	return nil
}
