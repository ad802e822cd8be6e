package producers

import (
	"fmt"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// The explorer's default budgets (ExplorerConfig). A plan is work the
// learner asks of every explorer, and anything that can publish a
// cycle.started can ask it: a valid plan of 4,096 tasks × 1,024 rollouts ×
// 1,000 updates once took an explorer to 5 GB in 80 s. The defaults leave
// room for far larger runs than the suites' (their largest cycle, k = 10
// updates of 140 tasks × 4 rollouts of 50 steps, holds 28,000 steps at
// once and takes 287,000 in all).
const (
	// DefaultExploreStepBudget is the default ExplorerConfig.StepBudget:
	// 256 Ki steps' worth of trajectories held at once, about a gigabyte
	// at most.
	DefaultExploreStepBudget = 1 << 18
	// DefaultShardStepBudget is the default ExplorerConfig.ShardBudget:
	// 8 Mi environment steps for one shard in all, minutes of one
	// explorer's time.
	DefaultShardStepBudget = 1 << 23
)

// shardSteps bounds the environment steps of shard k of plan in env, every
// episode counted at the environment's step limit: held, the largest
// batch of rollouts the explorer holds at once (one of π_B's training
// updates, every task of the cycle × the group; or the shard's
// collection), and total, the shard's whole exploration. A plan that
// trains π_B is counted as training, even where its PRM will turn out to
// be below the plan's AUC gate.
func shardSteps(plan schemas.CyclePlan, env envs.Env, k int) (held, total int64) {
	limit := stepLimit(env)
	trains := plan.ModeOrDefault() != schemas.ExplorerFrozen && !(plan.Tilt > 0)
	if trains {
		batch := int64(len(plan.Tasks)) * int64(plan.GroupSize) * limit
		if plan.Updates > 0 {
			held = batch
		}
		total = int64(plan.Updates) * batch
	}
	if collect := int64(plan.Collect); collect > 0 || !trains {
		if collect == 0 {
			collect = int64(plan.GroupSize) // unshaped: the collection is a group
		}
		lo, hi := plan.ShardTasks(k)
		collection := int64(hi-lo) * collect * limit
		held, total = max(held, collection), total+collection
	}
	return held, total
}

// checkBudget refuses shard k of cycle's plan when it would hold more
// steps at once than StepBudget or take more in all than ShardBudget.
func (x *Explorer) checkBudget(cycle int64, plan schemas.CyclePlan, env envs.Env, k int) error {
	held, total := shardSteps(plan, env, k)
	switch {
	case held > x.cfg.StepBudget:
		return streams.Rejectf("producers: shard %d of cycle %d would hold up to %d environment steps at once (its largest batch of rollouts, each counted at the environment's %d-step limit), over the explorer's step budget of %d",
			k, cycle, held, stepLimit(env), x.cfg.StepBudget)
	case total > x.cfg.ShardBudget:
		return streams.Rejectf("producers: shard %d of cycle %d would take up to %d environment steps in all (%d updates of π_B and the collection), over the explorer's shard budget of %d",
			k, cycle, total, plan.Updates, x.cfg.ShardBudget)
	}
	return nil
}

// validateBudgets reports negative budgets (0 is the default).
func validateBudgets(step, shard int64) error {
	if step < 0 || shard < 0 {
		return fmt.Errorf("producers: explorer step budget %d and shard budget %d: want positive numbers of steps (0: the defaults %d and %d)",
			step, shard, DefaultExploreStepBudget, DefaultShardStepBudget)
	}
	return nil
}
