package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/buffersvc"
	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// stageCluster is an embedded server with the rspo stages running as
// separate OS processes against it, as users run them with `rspo serve`.
type stageCluster struct {
	t        *testing.T
	bin, url string
	run, dir string
	js       jetstream.JetStream
	ctx      context.Context
}

// waitForUpdate waits until the learner's checkpoint has reached update n.
func (c *stageCluster) waitForUpdate(n int64) {
	c.t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		cp, ok, err := learnersvc.LoadCheckpoint(c.ctx, c.js, c.run)
		if err != nil {
			c.t.Fatal(err)
		}
		if ok && cp.Update >= n {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("the learner did not reach update %d", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func startStages(t *testing.T, run string) *stageCluster {
	t.Helper()
	bin := buildRSPO(t)
	e, js, ctx := testBus(t, "stages-test", 8*time.Minute)
	c := &stageCluster{t: t, bin: bin, url: e.ClientURL(), run: run, dir: t.TempDir(), js: js, ctx: ctx}
	for _, stage := range [][]string{
		{"actor", "--parallel", "2"},
		{"actor", "--parallel", "1"},
		{"explorer"},
		{"swapper"},
		{"buffer", "--data", filepath.Join(c.dir, "buffer")},
	} {
		args := append([]string{"serve", stage[0], "--nats", c.url, "--run", run}, stage[1:]...)
		newProc(t, bin, filepath.Join(c.dir, fmt.Sprintf("%s-%d.log", stage[0], len(stage))), args...)
	}
	return c
}

// learnerArgs is a short RSPO run of updates updates (k = 2, so updates/2
// cycles) on the easy household.
func (c *stageCluster) learnerArgs(updates int) []string {
	return []string{"serve", "learner", "--nats", c.url, "--run", c.run, "--env-opt", "preset=easy",
		"--updates", strconv.Itoa(updates), "--tasks", "4", "--group", "4", "--k", "2", "--alpha", "0.25",
		"--eval-every", "2", "--eval-episodes", "8", "--prm-warmup-tasks", "8",
		"--recipe", "paper"} // the paper's recipe warms its PRM up on the run itself: no source runs to wait for
}

// count tallies a run's messages: trajectories by subject, events by type,
// metrics by kind.
func (c *stageCluster) count() map[string]int {
	c.t.Helper()
	counts := map[string]int{}
	for _, subj := range []streams.SubjectKind{"traj.onpolicy", "traj.explore", "swapped", "ctrl", "metrics"} {
		err := streams.Replay(c.ctx, c.js, streams.ReplayOptions{Run: c.run, Subject: subj}, func(m streams.Message) error {
			switch {
			case m.Event != nil:
				counts[string(m.Event.Type)]++
			case m.Metrics != nil:
				counts["metrics."+m.Metrics.Kind]++
			default:
				counts[string(subj)]++
			}
			return nil
		})
		if err != nil {
			c.t.Fatal(err)
		}
	}
	return counts
}

func (c *stageCluster) policyVersions() []int64 {
	var vs []int64
	err := streams.Replay(c.ctx, c.js, streams.ReplayOptions{Run: c.run, Subject: "ctrl.policy.published"}, func(m streams.Message) error {
		if m.Event != nil {
			vs = append(vs, m.Event.PolicyVersion)
		}
		return nil
	})
	if err != nil {
		c.t.Fatal(err)
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i] < vs[j] })
	return vs
}

// checkFinished asserts that every stage did its part in a finished run.
func (c *stageCluster) checkFinished(updates int) {
	c.t.Helper()
	counts := c.count()
	for _, k := range []string{"traj.onpolicy", "traj.explore", "swapped", "metrics.update", "metrics.eval", "metrics.explore",
		string(schemas.EventCycleStarted), string(schemas.EventCycleExplored), string(schemas.EventPRMPublished)} {
		if counts[k] == 0 {
			c.t.Errorf("nothing on %s; counts %v", k, counts)
		}
	}
	if got, want := counts[string(schemas.EventCycleEnded)], updates/2; got != want {
		c.t.Errorf("cycle.ended: got %d, want %d", got, want)
	}
	if got := counts[string(schemas.EventRunFinished)]; got != 1 {
		c.t.Errorf("run.finished: got %d, want 1", got)
	}
	if counts["traj.explore"] != counts["swapped"] {
		c.t.Errorf("explore %d vs swapped %d: every explorer trajectory should reach the buffer stream",
			counts["traj.explore"], counts["swapped"])
	}
	vs := c.policyVersions()
	for i, v := range vs {
		if v != int64(i) {
			c.t.Fatalf("policy versions published: got %v, want 0..%d once each", vs, updates)
		}
	}
	if len(vs) != updates+1 {
		c.t.Errorf("policy versions published: got %v, want 0..%d", vs, updates)
	}
	cp, ok, err := learnersvc.LoadCheckpoint(c.ctx, c.js, c.run)
	if err != nil || !ok || !cp.Finished || cp.Update != int64(updates) {
		c.t.Errorf("checkpoint: %+v (found %v, err %v)", cp, ok, err)
	}
	// The buffer process cleared every ended cycle.
	if st, err := c.bufferCleared(int64(updates/2-1), 30*time.Second); err != nil {
		c.t.Fatalf("buffer after the run: %v (stats %+v)", err, st)
	}
}

// bufferCleared polls the buffer's stats until it holds no record and has
// cleared through cycle last, and returns the last stats it saw. The buffer
// clears asynchronously after the learner's last cycle.ended, and a stats
// request can fail while the buffer or the server restarts, so it retries
// until within.
func (c *stageCluster) bufferCleared(last int64, within time.Duration) (buffersvc.Stats, error) {
	nc, _, err := streams.Connect(c.ctx, c.url, streams.ConnectOptions{Name: "stats"})
	if err != nil {
		return buffersvc.Stats{}, err
	}
	defer nc.Close()
	client, err := buffersvc.NewClient(nc, c.run)
	if err != nil {
		return buffersvc.Stats{}, err
	}
	var st buffersvc.Stats
	deadline := time.Now().Add(within)
	for {
		st, err = client.Stats(c.ctx)
		if err == nil && st.Records == 0 && st.ClearedThrough == last {
			return st, nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("%d records, cleared through cycle %d; want 0 and %d", st.Records, st.ClearedThrough, last)
			}
			return st, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestStagesRunAsSeparateProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every stage as a process; skipped with -short")
	}
	c := startStages(t, "stages")
	out, err := exec.CommandContext(c.ctx, c.bin, c.learnerArgs(4)...).CombinedOutput()
	if err != nil {
		t.Fatalf("learner: %v\n%s", err, out)
	}
	c.checkFinished(4)
}

func TestLearnerKilledMidRunResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every stage as a process; skipped with -short")
	}
	c := startStages(t, "resume")
	learner := newProc(t, c.bin, filepath.Join(c.dir, "learner.log"), c.learnerArgs(4)...)
	// Kill the learner once it has published version 2 (mid-run, mid-cycle 1).
	c.waitForUpdate(2)
	learner.kill()
	cp, _, _ := learnersvc.LoadCheckpoint(c.ctx, c.js, c.run)
	if cp.Finished {
		t.Fatalf("learner finished before it could be killed: %+v", cp)
	}
	t.Logf("killed the learner after update %d", cp.Update)
	out, err := exec.CommandContext(c.ctx, c.bin, c.learnerArgs(4)...).CombinedOutput()
	if err != nil {
		t.Fatalf("restarted learner: %v\n%s", err, out)
	}
	c.checkFinished(4)
}

// A learner served without explorers trains on what the buffer holds once
// --explore-timeout passes, and its result says which cycles went short.
func TestServedLearnerReportsCyclesShortOfExploration(t *testing.T) {
	if testing.Short() {
		t.Skip("runs stages as processes; skipped with -short")
	}
	bin := buildRSPO(t)
	e, _, ctx := testBus(t, "short-cycles-test", 4*time.Minute)
	dir, run := t.TempDir(), "short"
	for _, stage := range [][]string{{"actor", "--parallel", "2"}, {"swapper"}, {"buffer", "--data", filepath.Join(dir, "buffer")}} {
		args := append([]string{"serve", stage[0], "--nats", e.ClientURL(), "--run", run}, stage[1:]...)
		newProc(t, bin, filepath.Join(dir, stage[0]+".log"), args...)
	}
	c := &stageCluster{t: t, bin: bin, url: e.ClientURL(), run: run, dir: dir, ctx: ctx}
	args := append(c.learnerArgs(2), "--explore-timeout", "2s")
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("learner: %v\n%s", err, out)
	}
	if want := "warning: 1 of its cycles (0) trained without all their exploration"; !strings.Contains(string(out), want) {
		t.Errorf("learner output lacks %q:\n%s", want, out)
	}
}

func TestServedLearnerRefusesNonPositiveTimeouts(t *testing.T) {
	for _, flag := range []string{"--explore-timeout", "--rollout-timeout"} {
		_, _, err := runRspo(testContext(t), "serve", "learner", "--run", "x", "--nats", "nats://127.0.0.1:1", flag, "0s")
		if err == nil || !strings.Contains(err.Error(), flag+" 0s: give a positive duration") {
			t.Errorf("%s 0s: got %v, want it refused before connecting", flag, err)
		}
	}
}
