package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/buffersvc"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
	"github.com/rspo-dev/rspo/swapper"
	"github.com/rspo-dev/rspo/swapper/swappertest"
)

// publishRecords publishes n swapped records of cycle and returns their ids.
func publishRecords(t *testing.T, js jetstream.JetStream, run string, cycle int64, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		r, err := swapper.Relabel(swappertest.Explorer(run, cycle, i, 4))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := streams.PublishSwapped(context.Background(), js, r); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	slices.Sort(ids)
	return ids
}

func TestBufferRebuildCommand(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := testContext(t)
	publishRecords(t, js, "r1", 0, 3)
	want := publishRecords(t, js, "r1", 1, 5)
	streamstest.StartCycles(t, js, "r1", 1)
	streamstest.EndCycle(t, js, "r1", 0)
	dir := filepath.Join(t.TempDir(), "buffer")
	old, err := buffersvc.Open(dir, buffersvc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	stale := buffersvc.Entry{Run: "r1", Cycle: 1, ID: "stale", Data: []byte("x")}
	if _, err := old.Put([]buffersvc.Entry{stale}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runRspo(ctx, "buffer", "rebuild", "--nats", s.ClientURL(), "--run", "r1", "--data", dir); err == nil ||
		!strings.Contains(err.Error(), "stop the buffer service") {
		t.Errorf("rebuild of an open store: error %v, want a refusal", err)
	}
	old.Close()

	out, _, err := runRspo(ctx, "buffer", "rebuild", "--nats", s.ClientURL(), "--run", "r1", "--data", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "8 messages read, 5 records stored, 0 replaced, 3 dropped (cleared through cycle 0)") {
		t.Errorf("rebuild output %q does not report 8 read, 5 stored, 3 dropped", out)
	}
	store, err := buffersvc.Open(dir, buffersvc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if got, _ := store.IDs("r1", 1); !slices.Equal(got, want) {
		t.Errorf("rebuilt cycle 1 holds %v, want %v (the stale record gone)", got, want)
	}
	if _, err := os.Stat(dir + ".rebuild"); !os.IsNotExist(err) {
		t.Errorf("temporary store left behind: %v", err)
	}
}

func TestBufferRebuildRefusesForeignDirectories(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := runRspo(testContext(t), "buffer", "rebuild", "--nats", "nats://127.0.0.1:1", "--run", "r1", "--data", dir)
	if err == nil || !strings.Contains(err.Error(), "holds no buffer store") {
		t.Errorf("got %v, want a refusal to replace a foreign directory", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Errorf("the foreign file is gone: %v", err)
	}
}

func TestBufferStatsAndSampleCommands(t *testing.T) {
	s := streamstest.RunServer(t)
	nc, js := streamstest.Connect(t, s)
	ctx := testContext(t)
	store, err := buffersvc.Open(t.TempDir(), buffersvc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	svc, err := buffersvc.NewService(nc, js, store, buffersvc.Config{Run: "r1", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- svc.Run(sctx) }()
	defer func() { cancel(); <-done }()
	publishRecords(t, js, "r1", 2, 6)

	var out string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		out, _, err = runRspo(ctx, "buffer", "stats", "--nats", s.ClientURL(), "--run", "r1")
		if err == nil && hasRow(out, "all", "6") {
			break
		}
	}
	if !hasRow(out, "CYCLE", "RECORDS") || !hasRow(out, "2", "6") || !hasRow(out, "all", "6") {
		t.Fatalf("stats output (err %v):\n%s\nwant a table with 6 records", err, out)
	}
	out, _, err = runRspo(ctx, "buffer", "sample", "--nats", s.ClientURL(), "--run", "r1", "--cycle", "2", "--count", "4")
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 5 || !strings.HasPrefix(lines[1], "1 ") {
		t.Errorf("sample output:\n%s\nwant a header and 4 ranked records", out)
	}
	if _, _, err := runRspo(ctx, "buffer", "sample", "--nats", s.ClientURL(), "--run", "r1", "--count", "0"); err == nil ||
		!strings.Contains(err.Error(), "count 0") {
		t.Errorf("sample --count 0: %v, want a flag error", err)
	}
}

func TestServeSwapperAndBufferFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"swapper without run", []string{"serve", "swapper"}, `"run" not set`},
		{"swapper bad run", []string{"serve", "swapper", "--run", "a.b"}, "invalid run name"},
		{"swapper env opt", []string{"serve", "swapper", "--run", "r", "--verify", "--env-opt", "preset"}, "want KEY=VALUE"},
		{"swapper env opt without verify", []string{"serve", "swapper", "--run", "r", "--env-opt", "preset=hard"}, "only used with --verify"},
		{"swapper batch", []string{"serve", "swapper", "--run", "r", "--batch", "0"}, "--batch 0"},
		{"buffer without data", []string{"serve", "buffer", "--run", "r"}, `"data" not set`},
		{"buffer keep", []string{"serve", "buffer", "--run", "r", "--data", "d", "--keep-cycles", "-1"}, "keep cycles -1"},
		{"buffer cap", []string{"serve", "buffer", "--run", "r", "--data", "d", "--max-samples", "-2"}, "max samples per record -2"},
		{"buffer ack wait", []string{"serve", "buffer", "--run", "r", "--data", "d", "--ack-wait", "0s"}, "--ack-wait 0s"},
		{"rebuild keep", []string{"buffer", "rebuild", "--run", "r", "--data", "d", "--keep-cycles", "-1"}, "--keep-cycles -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runRspo(testContext(t), tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error mentioning %q", err, tt.want)
			}
		})
	}
}

// hasRow reports whether a line of out starts with the given fields.
func hasRow(out string, fields ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= len(fields) && slices.Equal(f[:len(fields)], fields) {
			return true
		}
	}
	return false
}
