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

// requestRollouts asks the actors for groupSize rollouts of each task with
// policy version v, in chunks of ChunkTasks tasks, and returns the
// requests. The ids derive from (tag, version, chunk), so asking again
// after a restart is deduplicated.
func (s *Service) requestRollouts(ctx context.Context, tag string, v int64, cycle int64, tasks []envs.Task, groupSize int) ([]schemas.RolloutRequest, error) {
	var reqs []schemas.RolloutRequest
	for start := 0; start < len(tasks); start += s.cfg.ChunkTasks {
		chunk := tasks[start:min(start+s.cfg.ChunkTasks, len(tasks))]
		req := schemas.RolloutRequest{
			ID:  fmt.Sprintf("%s-v%d-%d", tag, v, start/s.cfg.ChunkTasks),
			Run: s.cfg.Run, Cycle: cycle, Update: s.cp.Update, PolicyVersion: v,
			Source: schemas.SourceOnPolicy, Env: s.cfg.Env, EnvOptions: s.cfg.EnvOptions,
			GroupSize: groupSize, Seed: rollout.EpisodeSeed(s.cfg.Seed, tag), Tasks: rollout.TaskRefs(chunk),
		}
		if _, err := streams.PublishRollout(ctx, s.js, req); err != nil {
			return nil, err
		}
		reqs = append(reqs, req)
	}
	return reqs, nil
}

// errCollected stops the replay once every expected trajectory is in.
var errCollected = errors.New("learnersvc: all rollouts collected")

// collect reads the on-policy stream from the checkpoint's sequence until
// it has every trajectory the requests asked for, in request order.
func (s *Service) collect(ctx context.Context, reqs []schemas.RolloutRequest) ([]*schemas.Trajectory, error) {
	want := map[string]int{}
	for _, r := range reqs {
		for i := range r.Tasks {
			for j := 0; j < r.GroupSize; j++ {
				want[rollout.RequestTrajectoryID(r, i, j)] = len(want)
			}
		}
	}
	got := make([]*schemas.Trajectory, len(want))
	missing := len(want)
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RolloutTimeout)
	defer cancel()
	var lastSeq uint64
	err := streams.Replay(ctx, s.js, streams.ReplayOptions{
		Run: s.cfg.Run, Subject: streams.KindTrajOnPolicy, FromSeq: max(1, s.cp.TrajSeq), Follow: true,
	}, func(m streams.Message) error {
		lastSeq = max(lastSeq, m.Seq)
		if m.Trajectory == nil {
			s.ignored++
			s.cfg.Logger.Warn("ignoring an undecodable message on the on-policy stream", "seq", m.Seq, "err", m.Err)
			return nil
		}
		k, ok := want[m.Trajectory.ID]
		if !ok || got[k] != nil {
			return nil
		}
		got[k] = m.Trajectory
		if missing--; missing == 0 {
			return errCollected
		}
		return nil
	})
	switch {
	case errors.Is(err, errCollected):
		s.nextSeq = lastSeq + 1
		return got, nil
	case ctx.Err() != nil && missing > 0:
		return nil, permanent(fmt.Errorf("learnersvc: %d of %d rollouts still missing after %v (are actors running?): %w",
			missing, len(want), time.Duration(s.cfg.RolloutTimeout), ctx.Err()))
	case err != nil:
		return nil, err
	}
	return nil, fmt.Errorf("learnersvc: rollout stream ended with %d of %d rollouts missing", missing, len(want))
}

// rollouts requests and collects groupSize rollouts of each task with the
// current policy.
func (s *Service) rollouts(ctx context.Context, tag string, cycle int64, tasks []envs.Task, groupSize int) ([]*schemas.Trajectory, error) {
	reqs, err := s.requestRollouts(ctx, tag, s.pol.Version(), cycle, tasks, groupSize)
	if err != nil {
		return nil, err
	}
	return s.collect(ctx, reqs)
}
