package learnersvc

import (
	"math"
	"slices"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/schemas"
)

// OffTarget says which of an update's on-policy groups the buffer's
// records join, and so how much off-policy data an update trains on.
type OffTarget string

const (
	// OffTargetAll is the paper's: every update takes α·B·N buffer records,
	// those of its own tasks first, at weight α.
	OffTargetAll OffTarget = "all"
	// OffTargetFailing takes buffer records only for the update's tasks
	// whose on-policy rollouts all failed — the groups in which the base
	// algorithm has no signal, the case RSPO's swap is built for — and
	// scales α by their share of α·B·N, so each record weighs what it does
	// under OffTargetAll. A policy that fails no group trains as its base
	// algorithm does; one that fails many as the paper's RSPO.
	OffTargetFailing OffTarget = "failing"
)

// Valid reports whether t is a known target ("" reads as all).
func (t OffTarget) Valid() bool { return t == "" || t == OffTargetAll || t == OffTargetFailing }

// offTasks are the task ids the update's buffer records are drawn for:
// every task of the update, or with OffTargetFailing those whose
// on-policy rollouts (on) all failed.
func (s *Service) offTasks(tasks []envs.Task, on []*schemas.Trajectory) []string {
	ids := make([]string, 0, len(tasks))
	for _, t := range tasks {
		ids = append(ids, t.ID)
	}
	if s.cfg.OffTarget != OffTargetFailing {
		return ids
	}
	succeeded := map[string]bool{}
	for _, t := range on {
		if t.Success {
			succeeded[t.TaskID] = true
		}
	}
	return slices.DeleteFunc(ids, func(id string) bool { return succeeded[id] })
}

// targetOff keeps the records that join one of ids' groups
// (OffTargetFailing only) and sets the trainer's α for them: the nominal α
// scaled by their share of the update's α·B·N records.
func (s *Service) targetOff(off []*schemas.Trajectory, ids []string) ([]*schemas.Trajectory, error) {
	if s.cfg.OffTarget != OffTargetFailing {
		return off, nil
	}
	var kept []*schemas.Trajectory
	for _, t := range off {
		if slices.Contains(ids, t.TaskID) {
			kept = append(kept, t)
		}
	}
	if len(kept) == 0 {
		return nil, nil
	}
	share := math.Min(1, float64(len(kept))/float64(s.cfg.offCount()))
	return kept, s.trainer.SetAlpha(s.cfg.Trainer.Alpha * share)
}

// ExploreTarget says which of a cycle's tasks the explorer explores.
type ExploreTarget string

const (
	// ExploreTargetAll explores every task of the cycle's pool: the paper's.
	ExploreTargetAll ExploreTarget = "all"
	// ExploreTargetFailing explores the pool's tasks of the task types
	// that had an on-policy group fail every rollout in the previous cycle,
	// with as many rollouts in all as the whole pool would get (each kept
	// task more, up to MaxTargetCollect): the explorer's budget goes where
	// the policy fails. A cycle with no such type before it (the first) is
	// explored whole.
	ExploreTargetFailing ExploreTarget = "failing"
)

// MaxTargetCollect bounds the rollouts per task ExploreTargetFailing
// gives a kept task.
const MaxTargetCollect = 16

// Valid reports whether t is a known target ("" reads as all).
func (t ExploreTarget) Valid() bool {
	return t == "" || t == ExploreTargetAll || t == ExploreTargetFailing
}

// countGroups adds the update's on-policy groups to the cycle's counts by
// task type.
func (cp *Checkpoint) countGroups(on []*schemas.Trajectory) {
	type group struct {
		typ     string
		success bool
	}
	groups := map[string]*group{}
	var order []string
	for _, t := range on {
		g, ok := groups[t.TaskID]
		if !ok {
			g = &group{typ: t.TaskType}
			groups[t.TaskID] = g
			order = append(order, t.TaskID)
		}
		g.success = g.success || t.Success
	}
	if cp.Groups == nil {
		cp.Groups = map[string]GroupCount{}
	}
	for _, id := range order {
		g := groups[id]
		c := cp.Groups[g.typ]
		c.Groups++
		if !g.success {
			c.Failed++
		}
		cp.Groups[g.typ] = c
	}
}

// targetExploration narrows the plan to ExploreTargetFailing's tasks: of
// pool, those whose type failed a group in counts (the previous cycle's),
// each collected more so the cycle's explorer budget stays the pool's.
// It returns the tasks to explore; plan's Collect and Shards are set for
// them.
func (c Config) targetExploration(plan *schemas.CyclePlan, pool []envs.Task, counts map[string]GroupCount) []envs.Task {
	if c.ExploreTarget != ExploreTargetFailing {
		return pool
	}
	kept := slices.DeleteFunc(slices.Clone(pool), func(t envs.Task) bool { return counts[t.Type].Failed == 0 })
	if len(kept) == 0 || len(kept) == len(pool) {
		return pool
	}
	budget := plan.Collect * len(pool)
	plan.Collect = min(MaxTargetCollect, max(plan.Collect, budget/len(kept)))
	plan.Shards = min(plan.ShardCount(), len(kept))
	return kept
}
