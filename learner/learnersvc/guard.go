package learnersvc

import (
	"context"
	"fmt"
	"strings"

	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// What enters an update. Anything with a run's actor or explorer
// credentials can publish a well-formed trajectory that no episode could
// have produced (a reward of 1e308, a log-prob of −1e308, an action that
// is not the one its index names) or that answers another request. The
// learner checks every on-policy trajectory against the request it
// answers and every buffer record against the cycle's plan, and checks
// both against the environment (rollout.CheckTrajectory). What fails is
// refused: logged, counted (metric refused_trajectories, or stale_refused),
// dead-lettered on rspo.<run>.dlq.learner with the reason and never
// trained on; a refused on-policy trajectory's request is asked again
// under a fresh nonce, whose episodes are the same. An update is never
// failed by a bad record.

// deadLetters is the component under which the learner dead-letters what
// it refuses: rspo.<run>.dlq.learner.
const deadLetters = "learner"

// maxRequestAttempts is how many times a rollout request is asked for in
// one collection: the first time and, while its trajectories are refused,
// twice more under fresh nonces. Every attempt plays the same episodes, so
// a genuine actor's answer to any of them is what the update trains on;
// past the last the wait runs out (RolloutTimeout) naming the refusals.
const maxRequestAttempts = 3

// readable says whether every step the learner trains on must be readable
// by the built-in policy (an admissible list, the action's index in it):
// with the built-in trainer. An external trainer gets the steps as they
// are; one that trains a model of its own may take free-text actions.
func (s *Service) readable() bool { return !s.external() }

// checkOnPolicy reports why t cannot be the answer to task task of req —
// it lags more than MaxStaleness behind π_θ (stale), it is not what the
// request asked of (another version, task, group or source), or nothing
// the environment could have produced — or nil.
func (s *Service) checkOnPolicy(req schemas.RolloutRequest, task int, t *schemas.Trajectory) (stale bool, err error) {
	if why, ok := s.refusedOnPolicy[t.ID]; ok {
		return false, fmt.Errorf("learnersvc: trajectory %s was refused by the trainer: %s", t.ID, why)
	}
	if err := s.checkLag(t); err != nil {
		return true, err
	}
	ref := req.Tasks[task]
	switch {
	case t.Source != schemas.SourceOnPolicy:
		return false, fmt.Errorf("learnersvc: trajectory %s has source %q on the on-policy stream", t.ID, t.Source)
	case t.PolicyVersion != req.PolicyVersion:
		return false, fmt.Errorf("learnersvc: trajectory %s claims policy version %d; its request %s asked for %d", t.ID, t.PolicyVersion, req.ID, req.PolicyVersion)
	case t.TaskID != ref.ID || t.GroupID != rollout.RequestGroupID(req, ref):
		return false, fmt.Errorf("learnersvc: trajectory %s is of task %q in group %q; its request %s asked for task %q in group %q",
			t.ID, t.TaskID, t.GroupID, req.ID, ref.ID, rollout.RequestGroupID(req, ref))
	}
	return false, rollout.CheckTrajectory(s.env, t, s.readable())
}

// refuseReplayed logs, counts and dead-letters an on-policy trajectory the
// learner will not train on. A failed dead letter is logged: the refusal
// stands.
func (s *Service) refuseReplayed(ctx context.Context, m streams.Message, stale bool, why error) {
	if stale {
		s.staleRefused++
	} else {
		s.refused++
	}
	s.cfg.Logger.Warn("refusing an on-policy trajectory", "seq", m.Seq, "trajectory", m.Trajectory.ID, "err", why)
	if err := streams.RecordReplayedDeadLetter(ctx, s.js, m, deadLetters, why.Error()); err != nil {
		s.cfg.Logger.Warn("refused trajectory not dead-lettered", "trajectory", m.Trajectory.ID, "err", err)
	}
}

// keepSampled returns the records of a buffer sample of cycle the learner
// trains on: swapped explorer records of the cycle whose ids its plan gave
// out (the cycle's nonce, a task of its pool: CyclePlan.CheckTrajectoryID)
// and that are plausible. The others are refused: logged, counted,
// dead-lettered, and left out of the cycle's later samples, where the
// buffer will offer them again.
func (s *Service) keepSampled(ctx context.Context, cycle int64, recs []*schemas.Trajectory) ([]*schemas.Trajectory, error) {
	if s.refusedCycle != cycle {
		s.refusedRecords, s.refusedCycle = map[string]bool{}, cycle
	}
	pool, err := s.cycleTasks(cycle)
	if err != nil {
		return nil, err
	}
	plan := schemas.CyclePlan{Tasks: rollout.TaskRefs(pool), Nonce: s.nonces.Cycle(cycle)}
	kept := recs[:0:0]
	for _, t := range recs {
		if s.refusedRecords[t.ID] {
			continue
		}
		if err := s.checkRecord(plan, cycle, t); err != nil {
			s.refuseRecord(ctx, t, err)
			continue
		}
		kept = append(kept, t)
	}
	return kept, nil
}

// checkRecord reports why t cannot be a buffer record of cycle, whose
// plan's ids are plan's, or nil.
func (s *Service) checkRecord(plan schemas.CyclePlan, cycle int64, t *schemas.Trajectory) error {
	switch {
	case t.Cycle != cycle:
		return fmt.Errorf("learnersvc: record %s of cycle %d in a sample of cycle %d", t.ID, t.Cycle, cycle)
	case t.Source != schemas.SourceExplore || !t.Swapped:
		return fmt.Errorf("learnersvc: record %s is not a swapped explorer trajectory (source %q, swapped %v)", t.ID, t.Source, t.Swapped)
	}
	if err := plan.CheckTrajectoryID(t); err != nil {
		return fmt.Errorf("learnersvc: record %s is not one of cycle %d's: %w", t.ID, cycle, err)
	}
	return rollout.CheckTrajectory(s.env, t, s.readable())
}

// refuseRecord logs, counts and dead-letters a buffer record, and leaves it
// out of the cycle's later samples. A failed dead letter is logged.
func (s *Service) refuseRecord(ctx context.Context, t *schemas.Trajectory, why error) {
	s.refused++
	s.refusedRecords[t.ID] = true
	s.cfg.Logger.Warn("refusing a buffer record", "cycle", t.Cycle, "record", t.ID, "err", why)
	s.deadLetterTrajectory(ctx, streams.Subjects(s.cfg.Run).Swapped, fmt.Sprintf("sample/c%d/%s", t.Cycle, t.ID), t, why.Error())
}

// acceptRecorded says whether a PRM refresh may train on t, a trajectory
// of the run's streams, which hold whatever anyone with a stage's
// credentials published there: an on-policy trajectory whose id carries
// the nonce the learner gave its request (one of its attempts), or a
// buffer record whose id carries its cycle's, and either plausible in the
// environment. A run without nonces checks plausibility only.
func (s *Service) acceptRecorded(plans map[int64]schemas.CyclePlan) func(*schemas.Trajectory) error {
	return func(t *schemas.Trajectory) error {
		if len(s.nonces) > 0 {
			var err error
			if t.Source == schemas.SourceOnPolicy {
				err = s.checkRequestNonce(t)
			} else {
				err = s.checkCycleNonce(plans, t)
			}
			if err != nil {
				return err
			}
		}
		return rollout.CheckTrajectory(s.env, t, false)
	}
}

// checkRequestNonce reports whether t's id, <run>.onpolicy.<request>.<seq>.<nonce>,
// ends with a nonce the learner gave request.
func (s *Service) checkRequestNonce(t *schemas.Trajectory) error {
	parts := strings.Split(t.ID, ".")
	if len(parts) == 5 {
		for a := range maxRequestAttempts {
			if parts[4] == s.nonces.Rollout(parts[2], a) {
				return nil
			}
		}
	}
	return fmt.Errorf("learnersvc: trajectory %s carries no nonce the learner gave its request", t.ID)
}

// checkCycleNonce reports whether t's id is one its cycle's plan gave out;
// plans caches the plans' ids by cycle.
func (s *Service) checkCycleNonce(plans map[int64]schemas.CyclePlan, t *schemas.Trajectory) error {
	plan, ok := plans[t.Cycle]
	if !ok {
		pool, err := s.cycleTasks(t.Cycle)
		if err != nil {
			return err
		}
		if len(plans) > 64 {
			clear(plans)
		}
		plan = schemas.CyclePlan{Tasks: rollout.TaskRefs(pool), Nonce: s.nonces.Cycle(t.Cycle)}
		plans[t.Cycle] = plan
	}
	return plan.CheckTrajectoryID(t)
}
