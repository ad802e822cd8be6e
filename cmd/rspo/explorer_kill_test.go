package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// TestExplorerKilledMidShardIsRedone runs two `rspo serve explorer`
// processes on a run whose cycles are split into 3 shards, SIGKILLs one
// as soon as it has published part of a shard, and checks that the other
// redoes the shard after the ack wait: the run finishes, and every
// trajectory of every shard is stored exactly once on traj.explore and on
// swapped, the partial shard's included.
func TestExplorerKilledMidShardIsRedone(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every stage as a process; skipped with -short")
	}
	c := startEmbeddedStages(t, "xkill")
	for _, stage := range [][]string{
		{"actor", "--parallel", "2"},
		{"swapper"},
		{"buffer", "--data", filepath.Join(c.dir, "buffer")},
	} {
		args := append([]string{"serve", stage[0], "--nats", c.url, "--run", c.run}, stage[1:]...)
		newProc(t, c.bin, filepath.Join(c.dir, stage[0]+".log"), args...)
	}
	explorer := func(name string) *proc {
		return newProc(t, c.bin, filepath.Join(c.dir, name+".log"), "serve", "explorer", "--nats", c.url, "--run", c.run,
			"--name", name, "--parallel", "1", "--ack-wait", "3s")
	}
	victim, _ := explorer("x1"), explorer("x2")

	// The victim is killed on its first trajectory: with --swap-all it
	// publishes a shard's rollouts after each of π_B's updates, so the
	// rest of its shard (another update, the final collection) is not done.
	killed := make(chan *schemas.Trajectory, 1)
	nc, _, err := streams.Connect(c.ctx, c.url, streams.ConnectOptions{Name: "xkill-watch"})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var once sync.Once
	sub, err := nc.Subscribe(streams.Subjects(c.run).TrajExplore, func(m *nats.Msg) {
		tr, err := schemas.DecodeTrajectory(m.Data)
		if err == nil && tr.Producer == "x1" {
			once.Do(func() { victim.kill(); killed <- tr })
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()

	const updates = 4 // k 2: 2 cycles of 3 on-policy tasks × k = 6 tasks
	args := append(c.learnerArgs(updates), "--explore-shards", "3", "--swap-all", "--explore-group", "4")
	out, err := exec.CommandContext(c.ctx, c.bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("learner: %v\n%s", err, out)
	}
	var last *schemas.Trajectory
	select {
	case last = <-killed:
	default:
		t.Fatal("explorer x1 never published a trajectory: it explored no shard and was not killed")
	}
	c.checkFinished(updates)

	// Every trajectory of every shard once: 2 cycles × 6 tasks × (k 2 updates × 4 + 1 collected).
	explore, swapped := c.ids(streams.KindTrajExplore), c.ids(streams.KindSwapped)
	const want = 2 * 6 * (2*4 + 1)
	if len(explore) != want || len(swapped) != want {
		t.Errorf("trajectories: %d explored, %d swapped, want %d each", len(explore), len(swapped), want)
	}
	for id, n := range explore {
		if n != 1 || swapped[id] != 1 {
			t.Errorf("trajectory %s: stored %d times on traj.explore, %d on swapped; want once each", id, n, swapped[id])
		}
	}
	// x1's last trajectory was of π_B's first update (tag c<cycle>-u0, 4
	// rollouts a task): its task's final rollout, which x1 did not live to
	// play, was played by x2, which redid the shard.
	task := last.Seq / 4
	key, _, err := learnersvc.LoadNonceKey(c.ctx, c.js, c.run)
	if err != nil {
		t.Fatal(err)
	}
	final := schemas.WithNonce(schemas.TrajectoryID(c.run, schemas.SourceExplore, fmt.Sprintf("c%d-final", last.Cycle), task), key.Cycle(last.Cycle))
	if got := c.producer(final); got != "x2" {
		t.Errorf("x1 was killed after %s: the final rollout %s of its task was made by %q, want x2 (the shard redone)", last.ID, final, got)
	}
	t.Logf("killed x1 after its trajectory %s; its shard's final rollout %s by x2", last.ID, final)
}

// startEmbeddedStages is startStages without the stage processes: an
// embedded server holding the rspo streams, for a test to start its own.
func startEmbeddedStages(t *testing.T, run string) *stageCluster {
	t.Helper()
	bin := buildRSPO(t)
	e, js, ctx := testBus(t, "stages-test", 8*time.Minute)
	return &stageCluster{t: t, bin: bin, url: e.ClientURL(), run: run, dir: t.TempDir(), js: js, ctx: ctx}
}

// ids counts the run's trajectories on subj by id.
func (c *stageCluster) ids(subj streams.SubjectKind) map[string]int {
	c.t.Helper()
	ids := map[string]int{}
	err := streams.Replay(c.ctx, c.js, streams.ReplayOptions{Run: c.run, Subject: subj}, func(m streams.Message) error {
		if m.Trajectory != nil {
			ids[m.Trajectory.ID]++
		}
		return nil
	})
	if err != nil {
		c.t.Fatal(err)
	}
	return ids
}

// producer returns who made the explore trajectory id ("" if none did).
func (c *stageCluster) producer(id string) string {
	c.t.Helper()
	var by string
	err := streams.Replay(c.ctx, c.js, streams.ReplayOptions{Run: c.run, Subject: streams.KindTrajExplore}, func(m streams.Message) error {
		if m.Trajectory != nil && m.Trajectory.ID == id {
			by = m.Trajectory.Producer
		}
		return nil
	})
	if err != nil {
		c.t.Fatal(err)
	}
	return by
}
