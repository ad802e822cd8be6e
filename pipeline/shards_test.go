package pipeline

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/producers"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// shardedRun trains cfg on a server of its own with the exploration split
// into shards and explored by explorers explorers, and returns the ids of
// the explore trajectories and the final policy's parameter hash.
func shardedRun(t *testing.T, cfg Config, shards, explorers int) (ids []string, hash string, envStepsExplorer int64) {
	t.Helper()
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	cfg.NATSURL = s.ClientURL()
	cfg.Learner.Explore.Shards = shards
	for k := 1; k < explorers; k++ {
		cfg.Extra = append(cfg.Extra, func(b Bus) (Stage, error) {
			x, err := producers.NewExplorer(b.JS, producers.ExplorerConfig{Run: cfg.Learner.Run,
				Name: fmt.Sprintf("explorer-%d", k), Logger: cfg.Logger})
			return serviceStage("explorer", x, err)
		})
	}
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	err = streams.Replay(context.Background(), js, streams.ReplayOptions{Run: cfg.Learner.Run, Subject: streams.KindTrajExplore},
		func(m streams.Message) error {
			if m.Trajectory != nil {
				seen[m.Trajectory.ID]++
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%d shards: trajectory %s stored %d times", shards, id, n)
		}
	}
	plain := make(map[string]int, len(seen)) // the ids without the run's nonces, which differ between runs
	for id, n := range seen {
		plain[id[:strings.LastIndexByte(id, '.')]] += n
	}
	reports := map[[2]int64]int{} // (cycle, shard) → cycle.explored events
	err = streams.Replay(context.Background(), js, streams.ReplayOptions{Run: cfg.Learner.Run,
		Subject: streams.CtrlKind(schemas.EventCycleExplored)}, func(m streams.Message) error {
		if m.Event != nil && max(1, m.Event.Shards) == int64(shards) {
			reports[[2]int64{m.Event.Cycle, m.Event.Shard}]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cycles := int64(cfg.Learner.Updates / cfg.Learner.K); len(reports) != int(cycles)*shards {
		t.Errorf("%d shards: cycle.explored of (cycle, shard) %v, want one of each of %d shards in %d cycles", shards, reports, shards, cycles)
	}
	cp, _, err := learnersvc.LoadCheckpoint(context.Background(), js, cfg.Learner.Run)
	if err != nil {
		t.Fatal(err)
	}
	b, err := streams.GetSnapshot(context.Background(), js, streams.BucketPolicy, streams.PolicyObject(cfg.Learner.Run, cp.Version))
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	return slices.Sorted(maps.Keys(plain)), paramHash(p), sum.EnvStepsExplorer
}

// A run whose exploration is split into 3 shards, explored by two
// explorers side by side, explores the same trajectories (by id, but for
// the nonces each run's learner chooses) and
// trains the same policy, to the bit, as the run explored in one piece.
// With a trained π_B every shard trains π_B, so its explorers take more
// environment steps; with a tilted one they take the same.
func TestShardedExplorationTrainsTheSamePolicy(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	for _, tt := range []struct {
		name string
		tilt float64
	}{{name: "tilted", tilt: 10}, {name: "trained"}} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := smallRun(t, t.TempDir(), true)
			cfg.Learner.Trainer.Alpha, cfg.Learner.Explore.Tilt = 0.25, tt.tilt
			ids1, hash1, steps1 := shardedRun(t, cfg, 1, 1)
			cfg.DataDir = t.TempDir()
			ids3, hash3, steps3 := shardedRun(t, cfg, 3, 2)
			if len(ids1) == 0 || !slices.Equal(ids1, ids3) {
				t.Errorf("explore trajectory ids: 3 shards %v, want the unsharded run's %v", ids3, ids1)
			}
			if hash1 != hash3 {
				t.Errorf("final policy: 3 shards %s, want the unsharded run's %s", hash3, hash1)
			}
			if tt.tilt > 0 && steps1 != steps3 || tt.tilt == 0 && steps3 <= steps1 {
				t.Errorf("explorer env steps: 3 shards %d, unsharded %d", steps3, steps1)
			}
		})
	}
}
