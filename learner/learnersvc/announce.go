package learnersvc

import (
	"context"
	"time"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// announce stamps and publishes a cycle.started or cycle.ended event
// through the run's cycle record (streams.AnnounceCycle): the record,
// which only the learner writes, is what the explorers, the swapper and
// the buffer check every cycle event against, so a forged one — a far
// cycle number that would wipe the buffer, a plan the learner did not
// send — is refused by all of them.
func (s *Service) announce(ctx context.Context, e schemas.Event) error {
	e.Run, e.Time = s.cfg.Run, time.Now().UTC()
	_, err := streams.AnnounceCycle(ctx, s.js, e)
	return err
}
