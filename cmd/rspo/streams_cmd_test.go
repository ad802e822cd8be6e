package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

func TestStreamsCommand(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := testContext(t)
	for i := range uint64(3) {
		for _, run := range []string{"r1", "r2"} {
			if _, err := streams.PublishTrajectory(ctx, js, streamstest.Trajectory(run, schemas.SourceExplore, i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := streams.PublishTrajectory(ctx, js, streamstest.Trajectory("r1", schemas.SourceOnPolicy, 0)); err != nil {
		t.Fatal(err)
	}
	for _, run := range []string{"r1", "r2"} {
		_, err := js.CreateOrUpdateConsumer(ctx, streams.StreamTraj, jetstream.ConsumerConfig{
			Durable: "swapper-" + run, FilterSubject: streams.Subjects(run).TrajExplore, AckPolicy: jetstream.AckExplicitPolicy,
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	out, _, err := runRspo(ctx, "streams", "--nats", s.ClientURL(), "--run", "r1")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`(?m)^RSPO_TRAJ\s+7\s+\S+ \S*B\s+1\s+7\s+2$`,
		`(?m)^RSPO_DLQ\s+0\s`,
		`(?m)^rspo\.r1\.traj\.explore\s+3$`,
		`(?m)^rspo\.r1\.traj\.onpolicy\s+1$`,
		`(?m)^RSPO_TRAJ\s+swapper-r1\s+rspo\.r1\.traj\.explore\s+3\s+0\s+0$`,
		`(?m)^rspo_policy\s+object store\s`,
		`(?m)^rspo_state\s+key-value \(0 values\)`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("output does not match %s:\n%s", want, out)
		}
	}
	for _, unwanted := range []string{"rspo.r2.", "swapper-r2"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("output for run r1 mentions %s:\n%s", unwanted, out)
		}
	}
}

func TestStreamsCommandOnEmptyServer(t *testing.T) {
	s := streamstest.RunServer(t) // no Ensure: nothing exists yet
	out, _, err := runRspo(testContext(t), "streams", "--nats", s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^RSPO_TRAJ\s+missing\s`).MatchString(out) || !strings.Contains(out, "rspo_state") {
		t.Errorf("got:\n%s\nwant every stream reported missing", out)
	}
}

func TestStreamsCommandBadRun(t *testing.T) {
	_, _, err := runRspo(context.Background(), "streams", "--run", "r.1")
	if err == nil || !strings.Contains(err.Error(), "--run") {
		t.Fatalf("got %v, want an error about --run", err)
	}
}

func TestFormatBytes(t *testing.T) {
	tests := []struct {
		name string
		n    uint64
		want string
	}{
		{"zero", 0, "0 B"},
		{"bytes", 1023, "1023 B"},
		{"kib", 1536, "1.5 KiB"},
		{"mib", 5 << 20, "5.0 MiB"},
		{"gib", 3 << 30, "3.0 GiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := formatBytes(tt.n); got != tt.want {
				t.Errorf("formatBytes(%d) = %q, want %q", tt.n, got, tt.want)
			}
		})
	}
}

func TestStreamsCommandJSON(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := testContext(t)
	for i := range uint64(3) {
		if _, err := streams.PublishTrajectory(ctx, js, streamstest.Trajectory("r1", schemas.SourceExplore, i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := streams.PublishTrajectory(ctx, js, streamstest.Trajectory("r2", schemas.SourceExplore, 0)); err != nil {
		t.Fatal(err)
	}
	out, _, err := runRspo(ctx, "streams", "--nats", s.ClientURL(), "--run", "r1", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep streamsReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	byName := map[string]streamEntry{}
	for _, e := range rep.Streams {
		byName[e.Name] = e
	}
	if e := byName[streams.StreamTraj]; e.Messages != 4 || e.LastSeq != 4 || e.Missing {
		t.Errorf("RSPO_TRAJ: %+v, want 4 messages", e)
	}
	if n := rep.Subjects["rspo.r1.traj.explore"]; n != 3 || len(rep.Subjects) != 1 {
		t.Errorf("subjects of r1: %v, want only rspo.r1.traj.explore with 3", rep.Subjects)
	}
	if len(rep.Buckets) != 3 {
		t.Errorf("buckets: %+v, want policy, prm and state", rep.Buckets)
	}
}

// --data reads a run's store directly, as replay, export, runs and report
// do; with --nats as well it is refused.
func TestStreamsCommandData(t *testing.T) {
	dir, run := trainedRun(t)
	out, stderr, err := runRspo(testContext(t), "streams", "--data", dir, "--run", run)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if want := `(?m)^rspo\.` + regexp.QuoteMeta(run) + `\.traj\.onpolicy\s+[1-9]`; !regexp.MustCompile(want).MatchString(out) {
		t.Errorf("output does not match %s:\n%s", want, out)
	}
	_, _, err = runRspo(testContext(t), "streams", "--data", dir, "--nats", "nats://127.0.0.1:1")
	if err == nil || !strings.Contains(err.Error(), "--data and --nats") {
		t.Errorf("--data with --nats: %v", err)
	}
}
