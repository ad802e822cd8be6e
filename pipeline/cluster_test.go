package pipeline

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// leaderKill stops the node leading RSPO_TRAJ and restarts it on the same
// store after a pause, recording what it did.
type leaderKill struct {
	c       *streamstest.Cluster
	js      jetstream.JetStream
	once    sync.Once
	done    chan struct{}
	leader  string
	atSeq   uint64
	down    time.Duration
	elected string
	err     error
}

// run kills the leader and, in the background, restarts it after pause.
func (k *leaderKill) run(ctx context.Context, pause time.Duration) {
	k.once.Do(func() {
		defer func() {
			if k.err != nil {
				close(k.done)
			}
		}()
		st, err := k.js.Stream(ctx, streams.StreamTraj)
		if err != nil {
			k.err = err
			return
		}
		info := st.CachedInfo()
		k.leader, k.atSeq = info.Cluster.Leader, info.State.LastSeq
		i := k.c.Index(k.leader)
		start := time.Now()
		k.c.Stop(i)
		go func() {
			defer close(k.done)
			time.Sleep(pause)
			if st, err := k.js.Stream(ctx, streams.StreamTraj); err == nil {
				k.elected = st.CachedInfo().Cluster.Leader
			}
			k.err = k.c.Start(i)
			k.down = time.Since(start)
		}()
	})
}

func TestRunSurvivesTrajLeaderKill(t *testing.T) {
	if testing.Short() {
		t.Skip("three-node cluster and a run; skipped with -short")
	}
	start := time.Now()
	c := streamstest.RunCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	nc, js, err := streams.Connect(ctx, c.URL(), streams.ConnectOptions{Name: "cluster-check"})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	cfg := smallRun(t, t.TempDir(), true)
	cfg.Learner.Trainer.Alpha = 0.25
	cfg.NATSURL, cfg.Connect = c.URL(), streams.ConnectOptions{Name: "cluster-run"}
	cfg.Streams = streams.Options{Replicas: 3}
	kill := &leaderKill{c: c, js: js, done: make(chan struct{})}
	cfg.Progress = func(p learnersvc.Progress) {
		if p.Update == 1 {
			kill.run(ctx, 2*time.Second)
		}
	}
	sum, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	<-kill.done
	if kill.err != nil {
		t.Fatalf("kill and restart: %v", kill.err)
	}
	t.Logf("killed %s (RSPO_TRAJ leader, at seq %d) after update 1; %s led meanwhile; back after %v; run took %.1fs, test %v",
		kill.leader, kill.atSeq, kill.elected, kill.down.Round(time.Millisecond), sum.WallSeconds, time.Since(start).Round(time.Millisecond))
	if kill.elected == "" || kill.elected == kill.leader {
		t.Errorf("RSPO_TRAJ leader while %s was down: %q, want another node", kill.leader, kill.elected)
	}
	if sum.Updates != 4 {
		t.Errorf("summary: %d updates, want 4", sum.Updates)
	}
	if _, ok := sum.Final["eval_success_rate"]; !ok {
		t.Errorf("final eval missing from the report: %v", sum.Final)
	}
	checkClusterRun(t, ctx, js, cfg.run(), 4)
	c.Wait(3)
	for _, spec := range streams.Topology() {
		waitReplicated(t, ctx, js, spec.Name)
	}
}

// checkClusterRun checks what the streams hold after a finished run:
// every explorer trajectory swapped, every policy version published once,
// nothing dead-lettered.
func checkClusterRun(t *testing.T, ctx context.Context, js jetstream.JetStream, run string, updates int) {
	t.Helper()
	count := func(kind streams.SubjectKind) int {
		n := 0
		err := streams.Replay(ctx, js, streams.ReplayOptions{Run: run, Subject: kind}, func(streams.Message) error {
			n++
			return nil
		})
		if err != nil {
			t.Fatalf("replay %s: %v", kind, err)
		}
		return n
	}
	explored, swapped := count(streams.KindTrajExplore), count(streams.KindSwapped)
	if explored == 0 || explored != swapped {
		t.Errorf("traj.explore %d, swapped %d: want equal and non-zero", explored, swapped)
	}
	if n := count(streams.KindDLQ); n != 0 {
		t.Errorf("%d dead letters, want none", n)
	}
	seen := map[int64]int{}
	err := streams.Replay(ctx, js, streams.ReplayOptions{Run: run, Subject: "ctrl.policy.published"}, func(m streams.Message) error {
		seen[m.Event.PolicyVersion]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for v := range int64(updates + 1) {
		if seen[v] != 1 {
			t.Errorf("policy version %d published %d times, want once (all: %v)", v, seen[v], seen)
		}
	}
	if len(seen) != updates+1 {
		t.Errorf("policy versions published: %v, want 0..%d", seen, updates)
	}
}

// waitReplicated waits until both followers of stream are current: the
// restarted node has caught up.
func waitReplicated(t *testing.T, ctx context.Context, js jetstream.JetStream, stream string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := js.Stream(ctx, stream)
		if err == nil {
			ci := st.CachedInfo().Cluster
			current := 0
			for _, p := range ci.Replicas {
				if p.Current && !p.Offline {
					current++
				}
			}
			if ci.Leader != "" && current == 2 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not replicated again: %+v (err %v)", stream, st, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
