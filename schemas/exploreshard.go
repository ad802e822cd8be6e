package schemas

import (
	"fmt"
)

// ExploreShard is one work item of a cycle's exploration: explore the
// tasks [TaskStart, TaskEnd) of the plan the cycle's cycle.started event
// carries. The learner queues a cycle's shards on rspo.<run>.work.explore
// after announcing the cycle; explorers share them as a work queue, so a
// cycle is explored by as many explorers as it has shards, and a shard an
// explorer did not finish is redone by another with the same seeds and
// trajectory ids. It travels as JSON.
type ExploreShard struct {
	Run string `json:"run"`
	// Cycle and PolicyVersion name the cycle.started event whose plan the
	// shard is part of: the cycle and the π_θ version π_B copies.
	Cycle         int64 `json:"cycle"`
	PolicyVersion int64 `json:"policy_version"`
	// Shard is this item's index among the cycle's Shards items.
	Shard  int `json:"shard"`
	Shards int `json:"shards"`
	// TaskStart and TaskEnd are the plan's task indices the shard explores
	// (CyclePlan.ShardTasks(Shard)); TaskEnd is exclusive.
	TaskStart int `json:"task_start"`
	TaskEnd   int `json:"task_end"`
}

// Validate reports whether the shard is well formed. Whether it is a
// shard of a given plan is CheckPlan's question.
func (s ExploreShard) Validate() error {
	if err := CheckRunName(s.Run); err != nil {
		return err
	}
	switch {
	case s.Cycle < 0 || s.PolicyVersion < 0:
		return &ValidationError{Field: "cycle/policy_version", Reason: "negative"}
	case s.Shards < 1 || s.Shards > MaxRolloutTasks:
		return &ValidationError{Field: "shards", Reason: fmt.Sprintf("%d not in 1..%d", s.Shards, MaxRolloutTasks)}
	case s.Shard < 0 || s.Shard >= s.Shards:
		return &ValidationError{Field: "shard", Reason: fmt.Sprintf("%d not in 0..%d", s.Shard, s.Shards-1)}
	case s.TaskStart < 0 || s.TaskEnd <= s.TaskStart || s.TaskEnd > MaxRolloutTasks:
		return &ValidationError{Field: "task_start/task_end", Reason: fmt.Sprintf("[%d, %d) is not a non-empty range within 0..%d", s.TaskStart, s.TaskEnd, MaxRolloutTasks)}
	}
	return nil
}

// CheckPlan reports whether s is one of the shards plan is split into:
// the same shard count and the task range the plan gives its index.
func (s ExploreShard) CheckPlan(p CyclePlan) error {
	if s.Shards != p.ShardCount() {
		return &ValidationError{Field: "shards", Reason: fmt.Sprintf("%d, but the cycle's plan has %d", s.Shards, p.ShardCount())}
	}
	if lo, hi := p.ShardTasks(s.Shard); s.TaskStart != lo || s.TaskEnd != hi {
		return &ValidationError{Field: "task_start/task_end", Reason: fmt.Sprintf("[%d, %d), but the plan gives shard %d tasks [%d, %d)", s.TaskStart, s.TaskEnd, s.Shard, lo, hi)}
	}
	return nil
}

// ShardsOf returns the shards plan is split into, for the cycle and π_θ
// version of its cycle.started event.
func ShardsOf(run string, cycle, policyVersion int64, p CyclePlan) []ExploreShard {
	out := make([]ExploreShard, p.ShardCount())
	for k := range out {
		lo, hi := p.ShardTasks(k)
		out[k] = ExploreShard{Run: run, Cycle: cycle, PolicyVersion: policyVersion,
			Shard: k, Shards: len(out), TaskStart: lo, TaskEnd: hi}
	}
	return out
}

// EncodeExploreShard returns the JSON wire form of s after validating it.
func EncodeExploreShard(s ExploreShard) ([]byte, error) { return encodeValidated(s) }

// DecodeExploreShard parses and validates an explore shard.
func DecodeExploreShard(b []byte) (ExploreShard, error) {
	s, err := decodeValidated[ExploreShard](b, "explore shard")
	if err != nil {
		return ExploreShard{}, err
	}
	return s, nil
}
