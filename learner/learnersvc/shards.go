package learnersvc

import (
	"context"
	"fmt"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// validateShards checks ExploreShards of the defaulted configuration: at
// least 1 and, with RSPO, at most the K·(1−α)·B tasks of a cycle, so no
// shard is empty.
func (c Config) validateShards() error {
	if c.Explore.Shards < 1 {
		return fmt.Errorf("learnersvc: explore shards %d: want at least 1 (0: the default, 1)", c.Explore.Shards)
	}
	if tasks := c.K * c.onTasks(); c.RSPO && c.Explore.Shards > tasks {
		return fmt.Errorf("learnersvc: explore shards %d: a cycle has %d tasks (k %d × %d on-policy tasks), so at most %d shards",
			c.Explore.Shards, tasks, c.K, c.onTasks(), tasks)
	}
	return nil
}

// queueShards queues the explore shards of the cycle's plan on the work
// queue. Their message ids are deterministic, so a learner that restarts
// within the cycle queues each shard once.
func (s *Service) queueShards(ctx context.Context, cycle int64, plan schemas.CyclePlan) error {
	for _, sh := range schemas.ShardsOf(s.cfg.Run, cycle, s.pol.Version(), plan) {
		ack, err := streams.PublishExploreShard(ctx, s.js, sh)
		if err != nil {
			return fmt.Errorf("learnersvc: queue explore shard %d of cycle %d: %w", sh.Shard, cycle, err)
		}
		s.queued(streams.ExploreShardID(sh), ack)
	}
	return nil
}

// exploreShardsWaitedFor names the cycle's shards by message id, for
// watchDeadLetters.
func (s *Service) exploreShardsWaitedFor(cycle int64, plan schemas.CyclePlan) map[string]string {
	what := map[string]string{}
	for _, sh := range schemas.ShardsOf(s.cfg.Run, cycle, s.pol.Version(), plan) {
		what[streams.ExploreShardID(sh)] = fmt.Sprintf("explore shard %d of %d of cycle %d", sh.Shard, sh.Shards, cycle)
	}
	return what
}

// shardReports collects the cycle.explored events of one cycle's shards:
// the first valid report of each shard counts, later ones (a shard redone
// after its explorer's claim lapsed) are dropped.
type shardReports struct {
	plan          schemas.CyclePlan
	policyVersion int64
	got           map[int64]schemas.Event
}

func newShardReports(plan schemas.CyclePlan, policyVersion int64) *shardReports {
	return &shardReports{plan: plan, policyVersion: policyVersion, got: map[int64]schemas.Event{}}
}

// add records e, a cycle.explored of the cycle, or says why it cannot
// answer one of the plan's shards. Events without a shard count (written
// before sharding) are shard 0 of 1.
func (r *shardReports) add(e schemas.Event) error {
	shards := max(1, e.Shards)
	if e.PolicyVersion != r.policyVersion {
		return fmt.Errorf("learnersvc: explored policy version %d, want %d", e.PolicyVersion, r.policyVersion)
	}
	if shards != int64(r.plan.ShardCount()) {
		return fmt.Errorf("learnersvc: shard %d of %d, but the plan has %d shards", e.Shard, shards, r.plan.ShardCount())
	}
	lo, hi := r.plan.ShardTasks(int(e.Shard))
	if e.Trajectories < int64(hi-lo) {
		return fmt.Errorf("learnersvc: shard %d announced %d trajectories, fewer than its %d tasks", e.Shard, e.Trajectories, hi-lo)
	}
	if _, dup := r.got[e.Shard]; !dup {
		r.got[e.Shard] = e
	}
	return nil
}

// complete says whether every shard has reported.
func (r *shardReports) complete() bool { return len(r.got) == r.plan.ShardCount() }

// trajectories is the number of trajectories the shards announced.
func (r *shardReports) trajectories() int64 {
	var n int64
	for _, e := range r.got {
		n += e.Trajectories
	}
	return n
}

// envSteps is the number of environment steps the shards' explorers took.
func (r *shardReports) envSteps() int64 {
	var n int64
	for _, e := range r.got {
		n += int64(e.Metrics["env_steps"])
	}
	return n
}
