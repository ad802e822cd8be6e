package learnersvc

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/rspo-dev/rspo/learner"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// The last line: the learner never publishes a bad policy. An update
// whose loss, value loss or gradient norm is not finite, or that leaves a
// parameter a snapshot cannot hold (policy.CheckFinite), is refused: the
// learner reloads its last good version (the checkpoint's, from the
// store), dead-letters every trajectory of the batch with the reason —
// the update cannot say which of them made it diverge — and stops the run
// with a NonFiniteUpdateError, so nothing non-finite is published or
// checkpointed and a restart resumes from the last good version. With
// the checks of guard.go no well-formed message should get this far; an
// update the trainer refuses for one trajectory (learner.BatchError) is
// redone without it instead.

// NonFiniteUpdateError says which update the learner refused and why; the
// run keeps Version, the last good version.
type NonFiniteUpdateError struct {
	Update, Version int64
	Reason          string
}

func (e *NonFiniteUpdateError) Error() string {
	return fmt.Sprintf("learnersvc: update %d refused: %s; the run keeps policy version %d and the update's trajectories are dead-lettered",
		e.Update, e.Reason, e.Version)
}

// checkUpdate reports why the update that gave st and left π_θ as it is
// must not be published, or "".
func (s *Service) checkUpdate(st learner.UpdateStats) string {
	for _, f := range []struct {
		name string
		v    float64
	}{{"loss", st.Loss}, {"value loss", st.ValueLoss}, {"gradient norm", st.GradNorm}, {"largest gradient norm", st.GradNormMax}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Sprintf("its %s is %v", f.name, f.v)
		}
	}
	if err := s.pol.CheckFinite(); err != nil {
		return fmt.Sprintf("it left a parameter no snapshot holds (%v)", err)
	}
	return ""
}

// refuseUpdate dead-letters the batch of an update that diverged, reloads
// the last good version and returns the error that ends the run.
func (s *Service) refuseUpdate(ctx context.Context, on, off []*schemas.Trajectory, reason string) error {
	e := &NonFiniteUpdateError{Update: s.cp.Update + 1, Version: s.cp.Version, Reason: reason}
	s.cfg.Logger.Error("refusing an update", "update", e.Update, "reason", reason, "keeps_version", e.Version)
	why := fmt.Sprintf("in the batch of update %d, refused: %s", e.Update, reason)
	sub := streams.Subjects(s.cfg.Run)
	for _, b := range []struct {
		subject string
		trajs   []*schemas.Trajectory
	}{{sub.Traj(schemas.SourceOnPolicy), on}, {sub.Swapped, off}} {
		for _, t := range b.trajs {
			s.deadLetterTrajectory(ctx, b.subject, fmt.Sprintf("update/u%d/%s", e.Update, t.ID), t, why)
		}
	}
	if err := s.resume(ctx, s.cp); err != nil {
		return permanent(errors.Join(e, fmt.Errorf("learnersvc: reloading version %d: %w", e.Version, err)))
	}
	return permanent(e)
}

// refuseBatchMember handles an update the trainer refused for one of its
// trajectories (a learner.BatchError naming it): the trajectory is
// refused like one guard.go refuses — an on-policy one is asked for again
// when the step is redone, a buffer record is left out of the cycle's
// samples — and the step is redone from the checkpoint. Without a
// trajectory to blame the update fails as before.
func (s *Service) refuseBatchMember(ctx context.Context, on, off []*schemas.Trajectory, err error) error {
	var be *learner.BatchError
	if !errors.As(err, &be) || be.ID == "" {
		return permanent(fmt.Errorf("learnersvc: update %d: %w", s.cp.Update+1, err))
	}
	trajs, subject := on, streams.Subjects(s.cfg.Run).Traj(schemas.SourceOnPolicy)
	if be.OffPolicy {
		trajs, subject = off, streams.Subjects(s.cfg.Run).Swapped
	}
	for _, t := range trajs {
		if t.ID != be.ID {
			continue
		}
		s.refused++
		if be.OffPolicy {
			s.refusedRecords[t.ID] = true
		} else {
			s.refusedOnPolicy[t.ID] = err.Error()
		}
		s.deadLetterTrajectory(ctx, subject, "batch/"+t.ID, t, err.Error())
	}
	return fmt.Errorf("learnersvc: update %d redone without a trajectory its trainer refused: %w", s.cp.Update+1, err)
}

// deadLetterTrajectory stores t, which the learner holds decoded, on its
// dead-letter subject with the reason; a failure is logged.
func (s *Service) deadLetterTrajectory(ctx context.Context, subject, id string, t *schemas.Trajectory, why string) {
	data, err := schemas.EncodeTrajectory(t)
	if err == nil {
		err = streams.RecordDeadLetterData(ctx, s.js, subject, data, deadLetters, id, why)
	}
	if err != nil {
		s.cfg.Logger.Warn("refused trajectory not dead-lettered", "trajectory", t.ID, "err", err)
	}
}
