package learnersvc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/streams"
)

// Checkpoint is the learner's durable progress, kept in the state bucket
// under <run>.learner.checkpoint and written after every published update.
// With the policy snapshot of Version it is all a restarted learner needs.
type Checkpoint struct {
	// Update is the number of updates done; Version the π_θ version they
	// produced (stored in the policy bucket).
	Update  int64 `json:"update"`
	Version int64 `json:"version"`
	// Model is the name inference servers serve Version under, as the
	// external trainer announced it (empty with the built-in trainer).
	Model string `json:"model,omitempty"`
	// PRMVersion is the PRM the next cycle scores with (0: none yet).
	PRMVersion int64 `json:"prm_version"`
	// TrajSeq is the RSPO_TRAJ sequence from which the next update's
	// rollouts are looked for.
	TrajSeq uint64 `json:"traj_seq"`
	// Environment steps spent so far, by actors (training rollouts) and by
	// explorers.
	EnvStepsActor    int64 `json:"env_steps_actor"`
	EnvStepsExplorer int64 `json:"env_steps_explorer"`
	// ExploredCycles is the highest cycle whose exploration was counted.
	ExploredCycles int64 `json:"explored_cycles"`
	// ShortCycles are the cycles the learner trained without waiting any
	// longer for their exploration: not every shard was explored, or the
	// buffer did not hold the explored records, within ExploreTimeout.
	// Their updates sampled what the buffer held, so a run that has any
	// is not the run its configuration describes (the summary says so).
	ShortCycles []int64 `json:"short_cycles,omitempty"`
	// Groups counts, by task type, the on-policy groups of the cycle in
	// progress and how many of them failed every rollout (ExploreTarget
	// failing plans the next cycle's exploration from them).
	Groups map[string]GroupCount `json:"groups,omitempty"`
	// Finished is set once run.finished is published.
	Finished bool `json:"finished"`
}

// GroupCount counts on-policy groups of one task type: all of them, and
// those whose rollouts all failed.
type GroupCount struct {
	Groups int `json:"groups"`
	Failed int `json:"failed"`
}

func checkpointKey(run string) string { return streams.StateKey(run, "learner", "checkpoint") }

// LoadCheckpoint reads a run's checkpoint; ok is false for a new run.
func LoadCheckpoint(ctx context.Context, js jetstream.JetStream, run string) (cp Checkpoint, ok bool, err error) {
	kv, err := streams.State(ctx, js)
	if err != nil {
		return Checkpoint{}, false, err
	}
	entry, err := kv.Get(ctx, checkpointKey(run))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Checkpoint{}, false, nil
	}
	if err != nil {
		return Checkpoint{}, false, fmt.Errorf("learnersvc: read checkpoint: %w", err)
	}
	if cp, err = DecodeCheckpoint(entry.Value()); err != nil {
		return Checkpoint{}, false, fmt.Errorf("learnersvc: checkpoint of run %s is corrupt: %w", run, err)
	}
	return cp, true, nil
}

func saveCheckpoint(ctx context.Context, js jetstream.JetStream, run string, cp Checkpoint) error {
	kv, err := streams.State(ctx, js)
	if err != nil {
		return err
	}
	b, err := json.Marshal(cp)
	if err != nil {
		return err
	}
	if _, err := kv.Put(ctx, checkpointKey(run), b); err != nil {
		return fmt.Errorf("learnersvc: write checkpoint: %w", err)
	}
	return nil
}

// DecodeCheckpoint parses a stored checkpoint and checks that it can be
// one: no negative count, and a policy version that some update made.
func DecodeCheckpoint(b []byte) (Checkpoint, error) {
	var cp Checkpoint
	if err := json.Unmarshal(b, &cp); err != nil {
		return Checkpoint{}, err
	}
	switch {
	case cp.Update < 0 || cp.Version < 0 || cp.PRMVersion < 0 || cp.ExploredCycles < 0:
		return Checkpoint{}, fmt.Errorf("negative count in %+v", cp)
	case cp.EnvStepsActor < 0 || cp.EnvStepsExplorer < 0:
		return Checkpoint{}, fmt.Errorf("negative environment steps in %+v", cp)
	case cp.Version > cp.Update:
		return Checkpoint{}, fmt.Errorf("policy version %d after %d updates", cp.Version, cp.Update)
	}
	for typ, g := range cp.Groups {
		if g.Groups < 0 || g.Failed < 0 || g.Failed > g.Groups {
			return Checkpoint{}, fmt.Errorf("groups of %s: %d failed of %d", typ, g.Failed, g.Groups)
		}
	}
	for i, c := range cp.ShortCycles {
		if c < 0 || slices.Contains(cp.ShortCycles[:i], c) {
			return Checkpoint{}, fmt.Errorf("short cycles %v: want distinct cycle numbers ≥ 0", cp.ShortCycles)
		}
	}
	return cp, nil
}
