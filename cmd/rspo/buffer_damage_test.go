package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/buffersvc"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/swapper"
	"github.com/rspo-dev/rspo/swapper/swappertest"
)

// A store whose MANIFEST was cut short does not open: rspo buffer rebuild
// moves it aside, keeping it, and rebuilds every record in its place
// (it used to refuse the store as "in use").
func TestBufferRebuildMovesADamagedStoreAside(t *testing.T) {
	s := startEmbedded(t, t.TempDir())
	ctx := testContext(t)
	_, js, err := s.Connect(ctx, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	if err := streams.Ensure(ctx, js, streams.Options{}); err != nil {
		t.Fatal(err)
	}
	want := publishRecords(t, js, "r1", 1, 20)
	dir := filepath.Join(t.TempDir(), "buffer")
	if _, _, err := runRspo(ctx, "buffer", "rebuild", "--nats", s.ClientURL(), "--run", "r1", "--data", dir); err != nil {
		t.Fatal(err)
	}
	manifests, err := filepath.Glob(filepath.Join(dir, "MANIFEST-*"))
	if err != nil || len(manifests) == 0 {
		t.Fatalf("no MANIFEST in the store (%v)", err)
	}
	for _, m := range manifests {
		if err := os.Truncate(m, 10); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := buffersvc.Open(dir, buffersvc.Options{}); err == nil {
		t.Fatal("the store opens with a truncated MANIFEST: the test damages nothing")
	}

	out, stderr, err := runRspo(ctx, "buffer", "rebuild", "--nats", s.ClientURL(), "--run", "r1", "--data", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(out, "moved the damaged store") || !strings.Contains(out, "20 records stored") {
		t.Errorf("output %q does not say the damaged store was moved aside and 20 records stored", out)
	}
	aside, _ := filepath.Glob(dir + ".damaged-*")
	if len(aside) != 1 {
		t.Errorf("damaged stores kept aside: %v, want one", aside)
	}
	store, err := buffersvc.Open(dir, buffersvc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if got, _ := store.IDs("r1", 1); len(got) != len(want) {
		t.Errorf("the rebuilt store holds %d records, want %d", len(got), len(want))
	}
}

// A block of RSPO_SWAPPED cut short (the bus stopped mid-write, then
// restarted) loses records: rspo buffer rebuild stores what remains and
// exits non-zero saying how many sequences are missing (it used to report
// "0 skipped" and succeed).
func TestBufferRebuildFailsOnRecordsLostFromTheStream(t *testing.T) {
	natsDir := t.TempDir()
	s := startEmbedded(t, natsDir)
	ctx := testContext(t)
	nc, js, err := s.Connect(ctx, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	if err := streams.Ensure(ctx, js, streams.Options{}); err != nil {
		t.Fatal(err)
	}
	for i := range 600 { // 32-step records: two blocks of the stream's files
		r, err := swapper.Relabel(swappertest.Explorer("r1", 1, i, 32))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := streams.PublishSwapped(context.Background(), js, r); err != nil {
			t.Fatal(err)
		}
	}
	nc.Close()
	s.Shutdown()
	block := filepath.Join(natsDir, "jetstream", "$G", "streams", streams.StreamSwapped, "msgs", "1.blk")
	fi, err := os.Stat(block)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(block, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	s = startEmbedded(t, natsDir)

	dir := filepath.Join(t.TempDir(), "buffer")
	out, _, err := runRspo(ctx, "buffer", "rebuild", "--nats", s.ClientURL(), "--run", "r1", "--data", dir)
	if !errors.Is(err, buffersvc.ErrGaps) || !strings.Contains(err.Error(), "sequences missing within the run's records") {
		t.Fatalf("rebuild: %v, want ErrGaps counting the missing sequences\n%s", err, out)
	}
	store, err := buffersvc.Open(dir, buffersvc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	got, _ := store.IDs("r1", 1)
	if len(got) == 0 || len(got) == 600 {
		t.Errorf("the rebuilt store holds %d records: want what survived, fewer than 600", len(got))
	}
}

// startEmbedded starts a server on dir, shut down when the test ends.
func startEmbedded(t *testing.T, dir string) *streams.Embedded {
	t.Helper()
	e, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: dir, Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Shutdown)
	return e
}
