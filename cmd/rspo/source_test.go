package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// --data reads a run's store in-process: the same lines as through a
// server, from either the run's data directory or its nats store.
func TestReplayReadsStoreDirectly(t *testing.T) {
	dir, run := trainedRun(t)
	viaData := replayLines(t, "--data", dir, "--run", run, "--subject", "traj.onpolicy")
	viaStore := replayLines(t, "--data", dir+"/nats", "--run", run, "--subject", "traj.onpolicy")
	viaServer := replayLines(t, "--nats", serveRecorded(t), "--run", run, "--subject", "traj.onpolicy")
	if len(viaData) == 0 || len(viaData) != len(viaServer) || len(viaStore) != len(viaServer) {
		t.Fatalf("--data DIR %d lines, --data DIR/nats %d, through a server %d", len(viaData), len(viaStore), len(viaServer))
	}
	for i := range viaData {
		if viaData[i].Trajectory.ID != viaServer[i].Trajectory.ID {
			t.Errorf("line %d: %s, through a server %s", i, viaData[i].Trajectory.ID, viaServer[i].Trajectory.ID)
		}
	}
}

func TestReplaySourceErrors(t *testing.T) {
	dir, run := trainedRun(t)
	empty := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"run that does not exist", []string{"--data", dir, "--run", "nope", "--subject", "ctrl"}, "run nope does not exist; the server holds " + run},
		{"no store", []string{"--data", empty, "--run", run, "--subject", "ctrl"}, "no JetStream store there"},
		{"data and nats", []string{"--data", dir, "--nats", "nats://127.0.0.1:1", "--run", run, "--subject", "ctrl"}, "exclusive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runRspo(testContext(t), append([]string{"replay"}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error with %q", err, tt.want)
			}
		})
	}
}

// rspo runs lists every run with its state: from the learner checkpoint,
// also for a run whose messages are gone.
func TestRunsListsRunsWithState(t *testing.T) {
	dir, run := trainedRun(t)
	setActiveWindow(t, 0) // the runs here are seconds old; none of them runs
	out, stderr, err := runRspo(testContext(t), "runs", "--data", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !regexp.MustCompile(`(?m)^` + run + `\s+finished\s+1\s+1\s+[1-9]\d*\s+[1-9]\d*\s+[0-9.]+ [KM]iB\s+-$`).MatchString(out) { // a test binary knows no revision
		t.Errorf("no finished line for %s:\n%s", run, out)
	}

	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := testContext(t)
	if err := streams.Ensure(ctx, js, streams.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := streams.PublishTrajectory(ctx, js, streamstest.Trajectory("fresh", schemas.SourceOnPolicy, 0)); err != nil {
		t.Fatal(err)
	}
	kv, err := streams.State(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "gone.learner.checkpoint", []byte(`{"update": 4, "version": 4, "env_steps_actor": 10}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "short.learner.checkpoint", []byte(`{"update": 6, "version": 6, "env_steps_actor": 10, "finished": true, "short_cycles": [0, 2]}`)); err != nil {
		t.Fatal(err)
	}
	// the revisions that trained it, as pipeline.Run records them with its cost
	if _, err := kv.Put(ctx, "short.pipeline.cost", []byte(`{"wall_seconds": 3, "revisions": ["0123456789abcdef0123", "fedcba9876543210fedc-modified"]}`)); err != nil {
		t.Fatal(err)
	}
	out, stderr, err = runRspo(ctx, "runs", "--nats", s.ClientURL())
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, re := range []string{`(?m)^fresh\s+interrupted \(no checkpoint\)\s+-\s+-\s+-\s+1\s+[0-9.]+ KiB\s+-$`,
		`(?m)^gone\s+interrupted \(update 4\)\s+4\s+4\s+10\s+0\s+0 B\s+-$`,
		`(?m)^short\s+finished, 2 cycles short of exploration\s+6\s+6\s+10\s+0\s+0 B\s+0123456789ab,fedcba987654-modified$`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output does not match %s:\n%s", re, out)
		}
	}
}
