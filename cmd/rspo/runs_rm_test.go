package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// setActiveWindow sets activeWindow for the test.
func setActiveWindow(t *testing.T, d time.Duration) {
	t.Helper()
	old := activeWindow
	activeWindow = d
	t.Cleanup(func() { activeWindow = old })
}

// copyDir copies a finished run's data directory, so that a test may
// delete from it.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "data")
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	return dst
}

// rspo runs rm deletes a finished run from a data directory: its messages,
// snapshots, state and files; the store then holds no run, and its files
// take less space.
func TestRunsRmRemovesAFinishedRun(t *testing.T) {
	setActiveWindow(t, 0)
	src, run := trainedRun(t)
	dir := copyDir(t, src)
	before, err := dirSize(dir)
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, err := runRspo(testContext(t), "runs", "rm", run, "--data", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !regexp.MustCompile(`^removed run ` + run + `: [1-9]\d* messages, [1-9]\d* consumers, [1-9]\d* snapshots, [1-9]\d* state keys, [0-9.]+ [KM]iB of files in ` +
		regexp.QuoteMeta(filepath.Join(dir, run)) + "\n$").MatchString(out) {
		t.Errorf("output %q", out)
	}
	if _, err := os.Stat(filepath.Join(dir, run)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the run's directory: %v, want it gone", err)
	}
	out, stderr, err = runRspo(testContext(t), "runs", "--data", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if strings.TrimSpace(out) != "no runs on this server" {
		t.Errorf("rspo runs after rm:\n%s", out)
	}
	after, err := dirSize(dir)
	if err != nil {
		t.Fatal(err)
	}
	if after >= before {
		t.Errorf("the data directory takes %d bytes after rm, %d before", after, before)
	}
	if _, _, err := runRspo(testContext(t), "runs", "rm", run, "--data", dir); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("removing it again: %v, want it not to exist", err)
	}
}

// A run whose learner holds its lease, or wrote a checkpoint lately, or
// whose consumer pulls, is being trained: rspo runs shows it running and
// rspo runs rm refuses it, deleting nothing.
func TestRunsRmRefusesALiveRun(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := testContext(t)
	kv, err := streams.State(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range []string{"leased", "checkpointed", "pulled", "idle"} {
		if _, err := streams.PublishTrajectory(ctx, js, streamstest.Trajectory(run, schemas.SourceOnPolicy, 0)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := kv.Put(ctx, "leased.learner.lease", []byte("holder")); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "checkpointed.learner.checkpoint", []byte(`{"update": 3, "version": 3}`)); err != nil {
		t.Fatal(err)
	}
	pulling(t, js, "pulled")

	setActiveWindow(t, time.Hour) // every write above is recent
	out, stderr, err := runRspo(ctx, "runs", "--nats", s.ClientURL())
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, re := range []string{`(?m)^leased\s+running \(no checkpoint yet\)`, `(?m)^checkpointed\s+running \(update 3\)`,
		`(?m)^pulled\s+running \(no checkpoint yet\)`, `(?m)^idle\s+interrupted \(no checkpoint\)`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output does not match %s:\n%s", re, out)
		}
	}
	for run, why := range map[string]string{"leased": "lease", "checkpointed": "checkpoint", "pulled": "pulling"} {
		_, _, err := runRspo(ctx, "runs", "rm", run, "--nats", s.ClientURL())
		if !errors.Is(err, ErrRunLive) || !strings.Contains(err.Error(), why) {
			t.Errorf("rm %s: %v, want ErrRunLive naming the %s", run, err, why)
		}
		if n, err := runMessages(ctx, js); err != nil || n[run] != 1 {
			t.Errorf("rm %s deleted its messages (%v, %v)", run, n, err)
		}
	}
	if _, stderr, err := runRspo(ctx, "runs", "rm", "idle", "--nats", s.ClientURL()); err != nil {
		t.Errorf("rm idle: %v\n%s", err, stderr)
	}

	setActiveWindow(t, 0) // a lease or checkpoint not rewritten since is stale
	if _, stderr, err := runRspo(ctx, "runs", "rm", "leased", "--nats", s.ClientURL()); err != nil {
		t.Errorf("rm leased with a stale lease: %v\n%s", err, stderr)
	}
}

// pulling starts a durable consumer of run's swapped subject with a pull
// request waiting, as a live buffer's, until the test ends.
func pulling(t *testing.T, js jetstream.JetStream, run string) {
	t.Helper()
	ctx := context.Background()
	cons, err := js.CreateOrUpdateConsumer(ctx, streams.StreamSwapped, jetstream.ConsumerConfig{
		Durable: "buffer-" + run, FilterSubject: streams.Subjects(run).Swapped, AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cons.Consume(func(jetstream.Msg) {})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cc.Stop)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if info, err := cons.Info(ctx); err == nil && info.NumWaiting > 0 {
			return
		}
	}
	t.Fatal("the consumer's pull never arrived")
}

func TestRunsRmErrors(t *testing.T) {
	s := streamstest.RunServer(t)
	streamstest.Connect(t, s)
	ctx := testContext(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"runs", "rm", "nope", "--nats", s.ClientURL()}, "run nope does not exist"},
		{[]string{"runs", "rm", "../x", "--nats", s.ClientURL()}, "run name"},
		{[]string{"runs", "rm", "--nats", s.ClientURL()}, "accepts 1 arg"},
	} {
		if _, _, err := runRspo(ctx, tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: %v, want an error with %q", tt.args, err, tt.want)
		}
	}
}
