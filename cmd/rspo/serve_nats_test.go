package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var listeningRE = regexp.MustCompile(`listening on (nats://\S+),`)

// startServeNATS runs `rspo serve nats` in the background and returns its
// client URL and a stop function that returns the command's error.
func startServeNATS(t *testing.T, f serveNATSFlags) (string, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	errc := make(chan error, 1)
	go func() { errc <- serveNATS(ctx, f, &stderr) }()
	stop := func() error { cancel(); return <-errc }
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := listeningRE.FindStringSubmatch(stderr.String()); m != nil {
			return m[1], stop
		}
		select {
		case err := <-errc:
			t.Fatalf("serve nats ended early: %v", err)
		default:
		}
	}
	_ = stop()
	t.Fatalf("serve nats did not report its URL; stderr:\n%s", stderr.String())
	return "", nil
}

func TestServeNATSAuthAndPersistence(t *testing.T) {
	f := serveNATSFlags{data: t.TempDir(), host: "127.0.0.1", port: -1, user: "alice", password: "s3cret"}
	url, stop := startServeNATS(t, f)
	ctx := testContext(t)

	_, _, err := runRspo(ctx, "streams", "--nats", url, "--user", "alice", "--password", "wrong")
	if err == nil || !strings.Contains(err.Error(), "Authorization Violation") || !strings.Contains(err.Error(), "check the user and password") {
		t.Fatalf("wrong password: got %v, want an authorization error with a hint", err)
	}

	nc, js, err := streams.Connect(ctx, url, streams.ConnectOptions{User: "alice", Password: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := streams.PublishTrajectory(ctx, js, streamstest.Trajectory("r1", schemas.SourceExplore, 1)); err != nil {
		t.Fatalf("publish to the served topology: %v", err)
	}
	nc.Close()
	if err := stop(); err != nil {
		t.Fatalf("serve nats returned %v after interrupt, want nil", err)
	}

	url, stop = startServeNATS(t, f) // same data directory
	defer func() { _ = stop() }()
	out, _, err := runRspo(ctx, "streams", "--nats", url, "--user", "alice", "--password", "s3cret", "--run", "r1")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^rspo\.r1\.traj\.explore\s+1$`).MatchString(out) {
		t.Errorf("after restart, want the trajectory still stored; got:\n%s", out)
	}
}

func TestServeNATSFlagErrors(t *testing.T) {
	ctx := testContext(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no data", []string{"serve", "nats"}, `"data" not set`},
		{"user without password", []string{"serve", "nats", "--data", t.TempDir(), "--user", "u"}, "needs a password"},
		{"negative max age", []string{"serve", "nats", "--data", t.TempDir(), "--max-age", "-1h"}, "negative"},
		{"bad port", []string{"serve", "nats", "--data", t.TempDir(), "--port", "70000"}, "port"},
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

var monitorRE = regexp.MustCompile(`NATS monitoring on (http://\S+) `)

// --monitor-port serves the server's own monitoring: /varz names the
// server and reports JetStream on.
func TestServeNATSMonitorPort(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	errc := make(chan error, 1)
	go func() {
		errc <- serveNATS(ctx, serveNATSFlags{data: t.TempDir(), host: "127.0.0.1", port: -1, monitorPort: -1}, &stderr)
	}()
	defer func() {
		cancel()
		if err := <-errc; err != nil {
			t.Error(err)
		}
	}()
	var url string
	for deadline := time.Now().Add(20 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := monitorRE.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
		}
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("monitoring URL %q, want one on loopback; stderr:\n%s", url, stderr.String())
	}
	resp, err := http.Get(url + "/varz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var varz struct {
		ServerName string `json:"server_name"`
		JetStream  struct {
			Config *struct{ StoreDir string } `json:"config"`
		} `json:"jetstream"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&varz); err != nil {
		t.Fatal(err)
	}
	if varz.ServerName != "rspo" || varz.JetStream.Config == nil {
		t.Errorf("/varz: server %q, JetStream config %v; want rspo with JetStream on", varz.ServerName, varz.JetStream.Config)
	}
}

// Serving the --data of rspo run serves the run's store (DIR/nats), not a
// new empty store beside it.
func TestServeNATSServesTheStoreOfARun(t *testing.T) {
	src, run := trainedRun(t)
	dir := t.TempDir() // a copy: the recorded run is shared by other tests
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	url, stop := startServeNATS(t, serveNATSFlags{data: dir, host: "127.0.0.1", port: -1})
	defer func() { _ = stop() }()
	out, _, err := runRspo(testContext(t), "streams", "--nats", url, "--run", run)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^rspo\.` + run + `\.traj\.onpolicy\s+[1-9]`).MatchString(out) {
		t.Errorf("want the run's trajectories served; got:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "jetstream")); !os.IsNotExist(err) {
		t.Errorf("a second store was made beside the run's: %v", err)
	}
}
