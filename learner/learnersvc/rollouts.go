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
// tasks. The ids derive from (tag, version, chunk), and the nonces from
// the ids (NonceKey.Rollout), so asking again after a restart is
// deduplicated.
func (s *Service) rolloutRequests(tag string, v, u, cycle int64, tasks []envs.Task, groupSize int) []schemas.RolloutRequest {
	var reqs []schemas.RolloutRequest
	for start := 0; start < len(tasks); start += s.cfg.ChunkTasks {
		chunk := tasks[start:min(start+s.cfg.ChunkTasks, len(tasks))]
		id := fmt.Sprintf("%s-v%d-%d", tag, v, start/s.cfg.ChunkTasks)
		reqs = append(reqs, schemas.RolloutRequest{
			ID: id, Run: s.cfg.Run, Cycle: cycle, Update: u, PolicyVersion: v,
			Source: schemas.SourceOnPolicy, Env: s.cfg.Env, EnvOptions: s.cfg.EnvOptions,
			GroupSize: groupSize, Seed: rollout.EpisodeSeed(s.cfg.Seed, tag), Tasks: rollout.TaskRefs(chunk),
			Nonce: s.nonces.Rollout(id, 0),
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
// of a policy version at most MaxStaleness behind π_θ's and plausible as
// the answer to its request (checkOnPolicy): one that is not is refused
// (counted, logged, dead-lettered) and its request asked again under a
// fresh nonce (the same episodes under new ids), at most
// maxRequestAttempts times in all. later are the requests of the updates
// asked for ahead (MaxStaleness ≥ 1): the next collection starts from the
// first of their trajectories this one read, so none is passed over. A
// request an actor dead-letters (one it cannot play, or whose
// trajectories it cannot store: a full disk) is never answered, so the
// wait ends at once with a permanent error naming the actor's reason
// instead of running into RolloutTimeout with a guess.
func (s *Service) collect(ctx context.Context, reqs, later []schemas.RolloutRequest) ([]*schemas.Trajectory, error) {
	c := newCollection(reqs)
	ahead := requestIDs(later)
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
		return s.take(ctx, c, m)
	})
	if errors.Is(err, errCollected) {
		s.nextSeq = lastSeq + 1
		if firstAhead > 0 {
			s.nextSeq = firstAhead
		}
		return c.got, nil
	}
	select {
	case why := <-deadLettered:
		return nil, permanent(fmt.Errorf("learnersvc: %s", why))
	default:
	}
	switch {
	case ctx.Err() != nil && c.missing > 0 && c.refused > 0:
		return nil, permanent(fmt.Errorf("learnersvc: %d of %d rollouts still missing after %v, and %d refused (%d as more than %d policy versions behind %d: do the actors play the version asked for?), each request asked for at most %d times: %w",
			c.missing, len(c.got), time.Duration(s.cfg.RolloutTimeout), c.refused, c.stale, s.cfg.MaxStaleness, s.pol.Version(), maxRequestAttempts, ctx.Err()))
	case ctx.Err() != nil && c.missing > 0:
		return nil, permanent(fmt.Errorf("learnersvc: %d of %d rollouts still missing after %v (are actors running?): %w",
			c.missing, len(c.got), time.Duration(s.cfg.RolloutTimeout), ctx.Err()))
	case err != nil:
		return nil, err
	}
	return nil, fmt.Errorf("learnersvc: rollout stream ended with %d of %d rollouts missing", c.missing, len(c.got))
}

// take handles one trajectory of the on-policy stream during collect: a
// wanted one that answers its request fills its place; one that does not
// is refused, and its request asked again while its place is empty.
func (s *Service) take(ctx context.Context, c *collection, m streams.Message) error {
	t := m.Trajectory
	w, ok := c.want[t.ID]
	if !ok {
		return nil
	}
	k := w.place
	p := c.places[k]
	if stale, err := s.checkOnPolicy(c.reqs[p.req], p.task, t); err != nil { // also after the genuine one: every bad copy counts
		c.refused++
		if stale {
			c.stale++
		}
		s.refuseReplayed(ctx, m, stale, err)
		if c.got[k] == nil && w.attempt == c.attempts[p.req] { // once per attempt: the next one answers all its places
			return s.askAgain(ctx, c, p.req)
		}
		return nil
	}
	if c.got[k] != nil {
		return nil
	}
	c.got[k] = t
	if c.missing--; c.missing == 0 {
		return errCollected
	}
	return nil
}

// askAgain publishes request r of the collection again under the nonce of
// its next attempt, whose trajectories then fill the same places, unless
// it was asked for maxRequestAttempts times (or the run has no nonces:
// the same ids would be deduplicated). A publish failure ends the
// collection, to be redone from the checkpoint.
func (s *Service) askAgain(ctx context.Context, c *collection, r int) error {
	if c.attempts[r]+1 >= maxRequestAttempts || len(s.nonces) == 0 {
		return nil
	}
	c.attempts[r]++
	req := c.reqs[r]
	req.Nonce = s.nonces.Rollout(req.ID, c.attempts[r])
	s.cfg.Logger.Warn("asking for a rollout request again under a fresh nonce", "request", req.ID, "attempt", c.attempts[r]+1)
	if _, err := streams.PublishRollout(ctx, s.js, req); err != nil {
		return err
	}
	c.add(r, req)
	return nil
}

// collection is what collect waits for: the places of the requests'
// trajectories, in request order, and which ids fill them.
type collection struct {
	reqs []schemas.RolloutRequest
	// want maps the id of every trajectory asked for (each attempt's) to
	// its place and attempt; places says which request and task each
	// place answers.
	want   map[string]wanted
	places []place
	got    []*schemas.Trajectory
	// attempts counts, per request, the attempts after the first.
	attempts []int
	// missing, refused and stale count the empty places, the refused
	// trajectories and those of them refused as stale.
	missing, refused, stale int
}

// place is one trajectory's place: its request and task within it.
type place struct{ req, task int }

// wanted is what a trajectory id answers: its place, in the attempt of
// its request that asked for it (0 for the first).
type wanted struct{ place, attempt int }

func newCollection(reqs []schemas.RolloutRequest) *collection {
	c := &collection{reqs: reqs, want: map[string]wanted{}, attempts: make([]int, len(reqs))}
	for r, req := range reqs {
		for i := range req.Tasks {
			for range req.GroupSize {
				c.places = append(c.places, place{req: r, task: i})
			}
		}
		c.add(r, req)
	}
	c.got = make([]*schemas.Trajectory, len(c.places))
	c.missing = len(c.places)
	return c
}

// add maps the trajectory ids of req, an attempt of request r, to r's places.
func (c *collection) add(r int, req schemas.RolloutRequest) {
	first := 0
	for _, p := range c.places {
		if p.req == r {
			break
		}
		first++
	}
	for i := range req.Tasks {
		for j := 0; j < req.GroupSize; j++ {
			c.want[rollout.RequestTrajectoryID(req, i, j)] = wanted{place: first + i*req.GroupSize + j, attempt: c.attempts[r]}
		}
	}
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
