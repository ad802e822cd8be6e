package learnersvc

import (
	"context"
	"fmt"

	"github.com/rspo-dev/rspo/schemas"
)

// Pipelined updates (Config.MaxStaleness = S). Update u's on-policy
// rollouts are asked of policy version max(0, u−S), as soon as π_θ has
// it: before update u−S is applied, so the actors play them while the
// learner trains. S = 0 is the synchronous loop. What an update trains on
// depends only on u, S and the seed — the request ids (tag u<u>, the
// version), the tasks and the episode seeds (the tag) — never on timing,
// so a given S trains the same policy whatever the actors' speed. With
// S = 0 the requests are those of the synchronous loop, bit for bit.
//
// The RSPO cycle stays synchronous: a cycle's first update starts its
// exploration (the explorer copies π_θ as it is then) and waits for it, as
// without pipelining; only the actors' rollouts overlap — the next
// updates' rollouts, including the first ones of the next cycle, whose
// tasks are the next cycle's pool (updateTasks is deterministic).

// rolloutVersion is the policy version update u's rollouts are asked of.
func (s *Service) rolloutVersion(u int64) int64 {
	return max(0, u-int64(s.cfg.MaxStaleness))
}

// lastAhead is the last update whose rollouts are asked for while update
// u is made: S ahead, not past the run's end.
func (s *Service) lastAhead(u int64) int64 {
	return min(u+int64(s.cfg.MaxStaleness), int64(s.cfg.Updates)-1)
}

// updateRequests are update u's rollout requests (not published).
func (s *Service) updateRequests(u int64) ([]schemas.RolloutRequest, error) {
	cycle := s.cycleOf(u)
	tasks, err := s.updateTasks(cycle, int(u%int64(s.cfg.K)), u)
	if err != nil {
		return nil, err
	}
	return s.rolloutRequests(fmt.Sprintf("u%d", u), s.rolloutVersion(u), u, cycle, tasks, s.cfg.GroupSize), nil
}

// requestAhead publishes the rollout requests of updates u (the next) to
// lastAhead(u) that this process has not published yet; each one's
// version is π_θ's or older. A restarted learner publishes the pending
// ones again: the same ids, deduplicated by the work queue or played
// again to the same trajectories, which collect takes once.
func (s *Service) requestAhead(ctx context.Context, u int64) error {
	if v := s.pol.Version(); v != u {
		return permanent(fmt.Errorf("learnersvc: policy version %d after %d updates: rollout versions are counted in updates", v, u))
	}
	for w := max(u, s.requested); w <= s.lastAhead(u); w++ {
		reqs, err := s.updateRequests(w)
		if err != nil {
			return err
		}
		if err := s.publishRequests(ctx, reqs); err != nil {
			return err
		}
		s.requested = w + 1
	}
	return nil
}

// updateRollouts collects update u's rollouts, reading past those of the
// updates asked for ahead.
func (s *Service) updateRollouts(ctx context.Context, u int64) ([]*schemas.Trajectory, error) {
	reqs, err := s.updateRequests(u)
	if err != nil {
		return nil, err
	}
	var later []schemas.RolloutRequest
	for w := u + 1; w <= s.lastAhead(u); w++ {
		r, err := s.updateRequests(w)
		if err != nil {
			return nil, err
		}
		later = append(later, r...)
	}
	return s.collect(ctx, reqs, later)
}

// checkLag refuses an on-policy trajectory of a policy version more than
// MaxStaleness behind π_θ's, or ahead of it (no such policy exists yet).
func (s *Service) checkLag(t *schemas.Trajectory) error {
	v := s.pol.Version()
	switch lag := v - t.PolicyVersion; {
	case lag < 0:
		return fmt.Errorf("learnersvc: trajectory %s claims policy version %d, newer than π_θ's %d", t.ID, t.PolicyVersion, v)
	case lag > int64(s.cfg.MaxStaleness):
		return fmt.Errorf("learnersvc: trajectory %s of policy version %d is %d versions behind π_θ's %d, more than max staleness %d",
			t.ID, t.PolicyVersion, lag, v, s.cfg.MaxStaleness)
	}
	return nil
}

// versionLag is the lag of the batch's trajectories behind π_θ's version
// v (before the update): the largest and the mean.
func versionLag(on []*schemas.Trajectory, v int64) (maxLag int64, meanLag float64) {
	var sum int64
	for _, t := range on {
		lag := v - t.PolicyVersion
		maxLag, sum = max(maxLag, lag), sum+lag
	}
	if len(on) > 0 {
		meanLag = float64(sum) / float64(len(on))
	}
	return maxLag, meanLag
}
