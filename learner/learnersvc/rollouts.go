package learnersvc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// rolloutRequests are the requests for groupSize rollouts of each task
// with policy version v, for update u (0-based), in chunks of ChunkTasks
// tasks. The ids derive from (tag, version, chunk), so asking again after
// a restart is deduplicated.
func (s *Service) rolloutRequests(tag string, v, u, cycle int64, tasks []envs.Task, groupSize int) []schemas.RolloutRequest {
	var reqs []schemas.RolloutRequest
	for start := 0; start < len(tasks); start += s.cfg.ChunkTasks {
		chunk := tasks[start:min(start+s.cfg.ChunkTasks, len(tasks))]
		reqs = append(reqs, schemas.RolloutRequest{
			ID:  fmt.Sprintf("%s-v%d-%d", tag, v, start/s.cfg.ChunkTasks),
			Run: s.cfg.Run, Cycle: cycle, Update: u, PolicyVersion: v,
			Source: schemas.SourceOnPolicy, Env: s.cfg.Env, EnvOptions: s.cfg.EnvOptions,
			GroupSize: groupSize, Seed: rollout.EpisodeSeed(s.cfg.Seed, tag), Tasks: rollout.TaskRefs(chunk),
		})
	}
	return reqs
}

// publishRequests puts the requests on the actors' work queue.
func (s *Service) publishRequests(ctx context.Context, reqs []schemas.RolloutRequest) error {
	for _, req := range reqs {
		ack, err := streams.PublishRollout(ctx, s.js, req)
		if err != nil {
			return err
		}
		s.queued(streams.RolloutID(req), ack)
	}
	return nil
}

// errCollected stops the replay once every expected trajectory is in.
var errCollected = errors.New("learnersvc: all rollouts collected")

// requestIDs maps the id of every trajectory reqs ask for to its place.
func requestIDs(reqs []schemas.RolloutRequest) map[string]int {
	ids := map[string]int{}
	for _, r := range reqs {
		for i := range r.Tasks {
			for j := 0; j < r.GroupSize; j++ {
				ids[rollout.RequestTrajectoryID(r, i, j)] = len(ids)
			}
		}
	}
	return ids
}

// collect reads the on-policy stream from the checkpoint's sequence until
// it has every trajectory the requests asked for, in request order, each
// of a policy version at most MaxStaleness behind π_θ's: an older one is
// refused (counted in staleRefused, logged) and the wait goes on for the
// actor's own. later are the requests of the updates asked for ahead
// (MaxStaleness ≥ 1): the next collection starts from the first of their
// trajectories this one read, so none is passed over. A request an actor
// dead-letters (one it cannot play, or whose trajectories it cannot
// store: a full disk) is never answered, so the wait ends at once with a
// permanent error naming the actor's reason instead of running into
// RolloutTimeout with a guess.
func (s *Service) collect(ctx context.Context, reqs, later []schemas.RolloutRequest) ([]*schemas.Trajectory, error) {
	want, ahead := requestIDs(reqs), requestIDs(later)
	got := make([]*schemas.Trajectory, len(want))
	missing, refused := len(want), 0
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RolloutTimeout)
	defer cancel()
	deadLettered := make(chan string, 1)
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	what := make(map[string]string, len(reqs))
	for _, r := range reqs {
		what[streams.RolloutID(r)] = "rollout request " + r.ID
	}
	defer s.settled(what)
	go s.watchActorDeadLetters(wctx, s.queuedAs(what), deadLettered, cancel)
	var lastSeq, firstAhead uint64
	err := streams.Replay(ctx, s.js, streams.ReplayOptions{
		Run: s.cfg.Run, Subject: streams.KindTrajOnPolicy, FromSeq: max(1, s.cp.TrajSeq), Follow: true,
	}, func(m streams.Message) error {
		lastSeq = max(lastSeq, m.Seq)
		if m.Trajectory == nil {
			s.ignored++
			s.cfg.Logger.Warn("ignoring an undecodable message on the on-policy stream", "seq", m.Seq, "err", m.Err)
			return nil
		}
		if _, ok := ahead[m.Trajectory.ID]; ok && firstAhead == 0 {
			firstAhead = m.Seq
		}
		k, ok := want[m.Trajectory.ID]
		if !ok {
			return nil
		}
		if err := s.checkLag(m.Trajectory); err != nil { // also after the genuine one: every stale copy counts
			refused++
			s.staleRefused++
			s.cfg.Logger.Warn("refusing an on-policy trajectory", "seq", m.Seq, "trajectory", m.Trajectory.ID, "err", err)
			return nil
		}
		if got[k] != nil {
			return nil
		}
		got[k] = m.Trajectory
		if missing--; missing == 0 {
			return errCollected
		}
		return nil
	})
	if errors.Is(err, errCollected) {
		s.nextSeq = lastSeq + 1
		if firstAhead > 0 {
			s.nextSeq = firstAhead
		}
		return got, nil
	}
	select {
	case why := <-deadLettered:
		return nil, permanent(fmt.Errorf("learnersvc: %s", why))
	default:
	}
	switch {
	case ctx.Err() != nil && missing > 0 && refused > 0:
		return nil, permanent(fmt.Errorf("learnersvc: %d of %d rollouts still missing after %v, and %d refused as more than %d policy versions behind %d (do the actors play the version asked for?): %w",
			missing, len(want), time.Duration(s.cfg.RolloutTimeout), refused, s.cfg.MaxStaleness, s.pol.Version(), ctx.Err()))
	case ctx.Err() != nil && missing > 0:
		return nil, permanent(fmt.Errorf("learnersvc: %d of %d rollouts still missing after %v (are actors running?): %w",
			missing, len(want), time.Duration(s.cfg.RolloutTimeout), ctx.Err()))
	case err != nil:
		return nil, err
	}
	return nil, fmt.Errorf("learnersvc: rollout stream ended with %d of %d rollouts missing", missing, len(want))
}

// rollouts requests and collects groupSize rollouts of each task with the
// current policy, outside the updates (the PRM warm-up).
func (s *Service) rollouts(ctx context.Context, tag string, cycle int64, tasks []envs.Task, groupSize int) ([]*schemas.Trajectory, error) {
	reqs := s.rolloutRequests(tag, s.pol.Version(), s.cp.Update, cycle, tasks, groupSize)
	if err := s.publishRequests(ctx, reqs); err != nil {
		return nil, err
	}
	return s.collect(ctx, reqs, nil)
}
