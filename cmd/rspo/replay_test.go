package main

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

func TestReplayCommandPrintsIdenticalTrajectories(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := testContext(t)
	var want []*schemas.Trajectory
	for i := range uint64(5) {
		tr := streamstest.Trajectory("r1", schemas.SourceOnPolicy, i)
		want = append(want, tr)
		for _, p := range []*schemas.Trajectory{tr, streamstest.Trajectory("r1", schemas.SourceExplore, i)} {
			if _, err := streams.PublishTrajectory(ctx, js, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	out, _, err := runRspo(ctx, "replay", "--nats", s.ClientURL(), "--run", "r1", "--subject", "traj.onpolicy")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, line := range lines {
		var got struct {
			Stream     string              `json:"stream"`
			Seq        uint64              `json:"seq"`
			Subject    string              `json:"subject"`
			Headers    map[string]string   `json:"headers"`
			Trajectory *schemas.Trajectory `json:"trajectory"`
			Error      string              `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if seed := fmt.Sprintf(`"task_seed":"%d"`, want[i].TaskSeed); !strings.Contains(line, seed) {
			t.Errorf("line %d lacks %s, the 64-bit seed as a string", i, seed)
		}
		if got.Error != "" || !reflect.DeepEqual(got.Trajectory, want[i]) {
			t.Errorf("line %d: got %+v (error %q), want %+v", i, got.Trajectory, got.Error, want[i])
		}
		if got.Stream != streams.StreamTraj || got.Seq != uint64(2*i+1) || got.Subject != "rspo.r1.traj.onpolicy" {
			t.Errorf("line %d: got %s seq %d %s, want RSPO_TRAJ seq %d rspo.r1.traj.onpolicy", i, got.Stream, got.Seq, got.Subject, 2*i+1)
		}
		if got.Headers[streams.HeaderMsgID] != want[i].ID {
			t.Errorf("line %d: got message id %q, want %q", i, got.Headers[streams.HeaderMsgID], want[i].ID)
		}
	}
}

func TestReplayCommandFromSeqAndDeadLetters(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := testContext(t)
	for i := range uint64(3) {
		if _, err := streams.PublishTrajectory(ctx, js, streamstest.Trajectory("r1", schemas.SourceExplore, i)); err != nil {
			t.Fatal(err)
		}
	}
	out, _, err := runRspo(ctx, "replay", "--nats", s.ClientURL(), "--run", "r1", "--subject", "traj.explore", "--from-seq", "3")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "\n"); n != 1 || !strings.Contains(out, `"seq":3`) {
		t.Errorf("got %d lines %q, want only seq 3", n, out)
	}
	out, _, err = runRspo(ctx, "replay", "--nats", s.ClientURL(), "--run", "r1", "--subject", "dlq")
	if err != nil || out != "" {
		t.Errorf("empty dlq: got %q, %v; want no output and no error", out, err)
	}
}

func TestReplayFlagErrors(t *testing.T) {
	ctx := testContext(t)
	base := []string{"replay", "--nats", "nats://127.0.0.1:1", "--run", "r1"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no subject", []string{"replay", "--run", "r1"}, `"subject" not set`},
		{"unknown subject", append(base, "--subject", "buffer"), "unknown subject"},
		{"bad run", []string{"replay", "--run", "a.b", "--subject", "traj"}, "invalid run name"},
		{"bad format", append(base, "--subject", "traj", "--format", "csv"), "only jsonl"},
		{"seq and since", append(base, "--subject", "traj", "--from-seq", "2", "--since", "1m"), "exclusive"},
		{"negative since", append(base, "--subject", "traj", "--since", "-1m"), "positive duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runRspo(ctx, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestReplayFlagsSince(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	o, err := replayFlags{run: "r1", subject: "ctrl", format: "jsonl", since: 30 * time.Minute}.options(now)
	if err != nil {
		t.Fatal(err)
	}
	if want := now.Add(-30 * time.Minute); !o.Since.Equal(want) {
		t.Fatalf("got since %v, want %v", o.Since, want)
	}
}

func TestReplayJSONLFollowFlushesEachLine(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx, cancel := context.WithCancel(testContext(t))
	w := newLineWaiter()
	errc := make(chan error, 1)
	go func() {
		errc <- replayJSONL(ctx, js, streams.ReplayOptions{Run: "r1", Subject: "traj.explore", Follow: true}, nil, w)
	}()
	if _, err := streams.PublishTrajectory(ctx, js, streamstest.Trajectory("r1", schemas.SourceExplore, 4)); err != nil {
		t.Fatal(err)
	}
	select {
	case line := <-w.lines:
		if !strings.Contains(line, `"id":"r1.explore.p0.4"`) {
			t.Errorf("got %q, want the trajectory with seq 4", line)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no line written while following")
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("follow returned %v after cancel, want nil", err)
	}
}

// lineWaiter is an io.Writer that hands over each write.
type lineWaiter struct{ lines chan string }

func newLineWaiter() *lineWaiter { return &lineWaiter{lines: make(chan string, 16)} }

func (w *lineWaiter) Write(p []byte) (int, error) {
	w.lines <- string(p)
	return len(p), nil
}
