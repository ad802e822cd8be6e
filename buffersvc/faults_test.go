package buffersvc_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/buffersvc"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/swapper"
	"github.com/rspo-dev/rspo/swapper/swappertest"
)

// diskBus is a JetStream server whose store survives a restart, so that a
// test can damage its files in between.
type diskBus struct {
	dir string
	e   *streams.Embedded
	nc  *nats.Conn
	js  jetstream.JetStream
}

func newDiskBus(t *testing.T) *diskBus {
	t.Helper()
	b := &diskBus{dir: t.TempDir()}
	b.start(t)
	t.Cleanup(b.stop)
	return b
}

func (b *diskBus) start(t *testing.T) {
	t.Helper()
	e, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: b.dir, Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	b.e = e
	ctx := context.Background()
	if b.nc, b.js, err = e.Connect(ctx, t.Name()); err != nil {
		t.Fatal(err)
	}
	if err := streams.Ensure(ctx, b.js, streams.Options{}); err != nil {
		t.Fatal(err)
	}
}

func (b *diskBus) stop() {
	if b.e != nil {
		b.nc.Close()
		b.e.Shutdown()
		b.e = nil
	}
}

// restart stops the server, calls damage, and starts it again.
func (b *diskBus) restart(t *testing.T, damage func()) {
	t.Helper()
	b.stop()
	damage()
	b.start(t)
}

// swappedBlocks lists RSPO_SWAPPED's message block files in order.
func (b *diskBus) swappedBlocks(t *testing.T) []string {
	t.Helper()
	blocks, err := filepath.Glob(filepath.Join(b.dir, "jetstream", "$G", "streams", streams.StreamSwapped, "msgs", "*.blk"))
	if err != nil || len(blocks) < 2 {
		t.Fatalf("want at least two blocks of %s, have %v (%v)", streams.StreamSwapped, blocks, err)
	}
	slices.SortFunc(blocks, func(x, y string) int { return len(x) - len(y) + strings.Compare(x, y)*btoi(len(x) == len(y)) })
	return blocks
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// publishSwapped publishes n swapped 32-step records of run "r" in cycle
// 1, each followed by one of run "other", and returns r's ids.
func publishSwapped(t *testing.T, js jetstream.JetStream, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		for _, run := range []string{"r", "other"} {
			r, err := swapper.Relabel(swappertest.Explorer(run, 1, i, 32))
			if err != nil {
				t.Fatal(err)
			}
			m := &nats.Msg{Subject: streams.Subjects(run).Swapped, Data: swappertest.Encode(r), Header: nats.Header{streams.HeaderMsgID: {r.ID}}}
			if _, err := js.PublishMsg(context.Background(), m); err != nil {
				t.Fatal(err)
			}
			if run == "r" {
				ids = append(ids, r.ID)
			}
		}
	}
	return ids
}

// truncateHalf cuts a file to half its size, as a crash mid-write does.
func truncateHalf(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
}

// logBuffer is a slog handler's output, safe for concurrent use.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// A block of RSPO_SWAPPED cut short in the middle of the stream (the bus
// stopped mid-write, then restarted) loses records: the rebuild stores
// what survived and counts, in Gaps, at least as many missing sequences
// as the run lost records.
func TestRebuildCountsRecordsLostInsideTheStream(t *testing.T) {
	b := newDiskBus(t)
	ids := publishSwapped(t, b.js, 600)
	b.restart(t, func() { truncateHalf(t, b.swappedBlocks(t)[0]) })

	store, err := buffersvc.Open(t.TempDir(), buffersvc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	res, err := buffersvc.Rebuild(context.Background(), b.js, store, "r", 0)
	if err != nil {
		t.Fatal(err)
	}
	lost := len(ids) - res.Put.Stored
	if lost == 0 {
		t.Fatal("the truncated block lost no record of the run: the test damages nothing")
	}
	if res.Gaps.Inside < uint64(lost) || res.Gaps.Tail != 0 || len(res.Gaps.Ranges) == 0 {
		t.Errorf("gaps %+v, want at least the %d records lost inside the stream", res.Gaps, lost)
	}
	t.Logf("%d of %d records survived; %s", res.Put.Stored, len(ids), res.Gaps)
}

// The last block of RSPO_SWAPPED cut short loses the stream's end: no hole
// is left, but the buffer's consumer had been delivered past the new end,
// which the rebuild counts as missing.
func TestRebuildCountsRecordsLostAtTheStreamsEnd(t *testing.T) {
	b := newDiskBus(t)
	ids := publishSwapped(t, b.js, 600)
	cons, err := b.js.CreateOrUpdateConsumer(context.Background(), streams.StreamSwapped, jetstream.ConsumerConfig{
		Durable: "buffer-r", FilterSubject: streams.Subjects("r").Swapped, AckPolicy: jetstream.AckNonePolicy})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(len(ids))
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for range batch.Messages() {
		got++
	}
	if got != len(ids) {
		t.Fatalf("the consumer fetched %d of %d records", got, len(ids))
	}
	b.restart(t, func() {
		blocks := b.swappedBlocks(t)
		truncateHalf(t, blocks[len(blocks)-1])
	})

	store, err := buffersvc.Open(t.TempDir(), buffersvc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	res, err := buffersvc.Rebuild(context.Background(), b.js, store, "r", 0)
	if err != nil {
		t.Fatal(err)
	}
	lost := len(ids) - res.Put.Stored
	if lost == 0 {
		t.Fatal("the truncated block lost no record of the run: the test damages nothing")
	}
	if res.Gaps.Tail < uint64(lost) {
		t.Errorf("gaps %+v, want at least the %d records lost at the end", res.Gaps, lost)
	}
	t.Logf("%d of %d records survived; %s", res.Put.Stored, len(ids), fmt.Sprint(res.Gaps))
}

// ackAll acknowledges every record of run "r" on a durable consumer named
// as the buffer's, as a buffer that stored them would have.
func ackAll(t *testing.T, js jetstream.JetStream, n int) {
	t.Helper()
	cons, err := js.CreateOrUpdateConsumer(context.Background(), streams.StreamSwapped, jetstream.ConsumerConfig{
		Durable: "buffer-r", FilterSubject: streams.Subjects("r").Swapped, AckPolicy: jetstream.AckExplicitPolicy, MaxDeliver: -1})
	if err != nil {
		t.Fatal(err)
	}
	for acked := 0; acked < n; {
		batch, err := cons.Fetch(256, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range batch.Messages() {
			if err := m.DoubleAck(context.Background()); err != nil {
				t.Fatal(err)
			}
			acked++
		}
	}
}

// A start-up rebuild of a lost store that is cut short (here the process
// stops mid-rebuild; a full disk fails it the same way) leaves the store
// as it was, and the next start rebuilds every record. It used to leave
// the records stored so far, which the next start took for a complete
// store and served: a third of the run, with no warning.
func TestAnInterruptedStartUpRebuildIsRedoneInFull(t *testing.T) {
	b := newDiskBus(t)
	ids := publishSwapped(t, b.js, 800)
	ackAll(t, b.js, len(ids))
	dir := t.TempDir()
	store, err := buffersvc.Open(dir, buffersvc.Options{}) // the old store is lost
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()

	svc, err := buffersvc.NewService(b.nc, b.js, store, buffersvc.Config{Run: "r", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	for { // stop as soon as the rebuild has stored something, aside or in place
		st, err := store.Stats("r")
		if _, aside := os.Stat(dir + ".rebuild"); err == nil && st.Records > 0 || aside == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the service returned %v before the rebuild was seen", err)
		default:
		}
	}
	stop()
	<-done
	if st, err := store.Stats("r"); err != nil || st.Records == int64(len(ids)) {
		t.Fatalf("the rebuild finished before it was stopped (%d records, %v): the test interrupts nothing", st.Records, err)
	}

	svc, err = buffersvc.NewService(b.nc, b.js, store, buffersvc.Config{Run: "r", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	run(t, "buffer", svc.Run)
	client, err := buffersvc.NewClient(b.nc, "r")
	if err != nil {
		t.Fatal(err)
	}
	var st buffersvc.Stats
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if st, err = client.Stats(context.Background()); err == nil && st.Records == int64(len(ids)) {
			return
		}
	}
	t.Errorf("after the restart the buffer serves %d of %d records (%v)", st.Records, len(ids), err)
}

// corruptSST writes 8 KB of random bytes into the middle of every sstable
// of the store in dir.
func corruptSST(t *testing.T, dir string) {
	t.Helper()
	ssts, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	if err != nil || len(ssts) == 0 {
		t.Fatalf("no sstable in the store (%v)", err)
	}
	noise := make([]byte, 8<<10)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	for _, sst := range ssts {
		f, err := os.OpenFile(sst, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := f.Stat()
		if err == nil {
			_, err = f.WriteAt(noise, fi.Size()/3)
		}
		if err = errors.Join(err, f.Close()); err != nil {
			t.Fatal(err)
		}
	}
}

// 8 KB of random bytes inside the store's sstable fail the checksum of
// the records there: the sample that meets them logs the damage, the
// store is healed from the stream, and the sample is answered in full. It
// used to answer 500 "checksum mismatch" to every sample of the cycle,
// logging nothing.
func TestSampleHealsADamagedStoreFromTheStream(t *testing.T) {
	b := newDiskBus(t)
	ids := publishSwapped(t, b.js, 100)
	dir := t.TempDir()
	store, err := buffersvc.Open(dir, buffersvc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := buffersvc.NewService(b.nc, b.js, store, buffersvc.Config{Run: "r", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- first.Run(ctx) }()
	for st, _ := store.Stats("r"); st.Records < int64(len(ids)); st, _ = store.Stats("r") {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	if err := errors.Join(<-done, store.Close()); err != nil {
		t.Fatal(err)
	}
	corruptSST(t, dir)

	if store, err = buffersvc.Open(dir, buffersvc.Options{}); err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.Sample("r", buffersvc.SampleRequest{Cycle: 1, Count: len(ids)}); err == nil || !pebble.IsCorruptionError(err) {
		t.Fatalf("sampling the damaged store: %v, want a checksum mismatch (the test damages nothing)", err)
	}
	var logs logBuffer
	svc, err := buffersvc.NewService(b.nc, b.js, store, buffersvc.Config{Run: "r", Logger: logs.logger()})
	if err != nil {
		t.Fatal(err)
	}
	run(t, "buffer", svc.Run)
	client, err := buffersvc.NewClient(b.nc, "r")
	if err != nil {
		t.Fatal(err)
	}
	got, err := client.Sample(context.Background(), buffersvc.SampleRequest{Cycle: 1, Count: len(ids)})
	if err != nil || len(got) != len(ids) {
		t.Fatalf("sample of the damaged store: %d records, %v; want all %d", len(got), err, len(ids))
	}
	if !strings.Contains(logs.String(), "checksum mismatch") {
		t.Errorf("the damage is not logged:\n%s", logs.String())
	}
}
