package buffersvc_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/buffersvc"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
	"github.com/rspo-dev/rspo/swapper"
	"github.com/rspo-dev/rspo/swapper/swappertest"
)

// A schema-valid cycle.ended with a cycle the learner never started used
// to wipe the buffer and set the clear watermark there, so every later
// record was dropped silently — also after a restart and a rebuild. It
// must be dead-lettered, and the buffer must go on storing.
func TestForgedCycleEndedIsDeadLetteredAndWipesNothing(t *testing.T) {
	b := newBus(t, 0)
	b.startBuffer(t, buffersvc.Config{})
	b.startSwapper(t)
	streamstest.StartCycles(t, b.js, "r", 1)
	b.publishExplorers(t, 1, 4, 4)
	b.waitRecords(t, 4)
	for _, c := range []int64{9000000000000000000, 2} {
		forged := schemas.Event{Type: schemas.EventCycleEnded, Run: "r", Cycle: c, Time: time.Unix(1700000000, 0).UTC()}
		if _, err := streams.PublishEvent(context.Background(), b.js, forged); err != nil {
			t.Fatal(err)
		}
	}
	b.publishExplorers(t, 2, 3, 4) // cycle 2's records come in after the forged events
	st := b.waitRecords(t, 7)
	if st.ClearedThrough != -1 || st.Ingest.Dropped != 0 {
		t.Errorf("after forged cycle.ended events: cleared through %d, %d dropped; want -1 and 0", st.ClearedThrough, st.Ingest.Dropped)
	}
	reasons := deadLetterReasons(t, b, 2)
	for _, r := range reasons {
		if !strings.Contains(r, "not the learner's event") {
			t.Errorf("dead-letter reason %q does not say why", r)
		}
	}
	fresh, err := buffersvc.Open(t.TempDir(), buffersvc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	res, err := buffersvc.Rebuild(context.Background(), b.js, fresh, "r", 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.ClearedThrough != -1 || res.Put.Stored != 7 || res.IgnoredEnds != 2 {
		t.Errorf("rebuild %+v: want nothing cleared, 7 stored, 2 cycle.ended events ignored", res)
	}
}

// A schema-valid cycle.started with a far cycle number, then a
// cycle.ended of that cycle — no credentials needed where auth is off —
// wiped the buffer and dropped every later record: the cycle.ended was
// checked against the latest cycle.started on the bus, which the forgery
// had become. Both are dead-lettered, as is a cycle.ended of the cycle in
// progress; the buffer keeps every record, also across a restart and a
// rebuild, and the learner's own cycle.ended still clears.
func TestForgedFarCycleDoesNotWipeTheBuffer(t *testing.T) {
	b := newBus(t, 0)
	ctx, stop := context.WithCancel(context.Background())
	first, err := buffersvc.NewService(b.nc, b.js, b.store, buffersvc.Config{Run: "r", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- first.Run(ctx) }()
	b.startSwapper(t)
	streamstest.StartCycles(t, b.js, "r", 1) // the learner is in cycle 1
	b.publishExplorers(t, 0, 2, 4)
	b.publishExplorers(t, 1, 4, 4)
	b.waitRecords(t, 6)
	const far = 9000000000000000000
	for _, e := range []schemas.Event{
		{Type: schemas.EventCycleStarted, Run: "r", Cycle: far, Config: []byte(`{"env":"household"}`)},
		{Type: schemas.EventCycleEnded, Run: "r", Cycle: far},
		{Type: schemas.EventCycleEnded, Run: "r", Cycle: 1},
	} {
		e.Time = time.Unix(1700000000, 0).UTC()
		if _, err := streams.PublishEvent(context.Background(), b.js, e); err != nil {
			t.Fatal(err)
		}
	}
	reasons := deadLetterReasons(t, b, 3)
	for want, n := range map[string]int{"cycle.started of cycle 9000000000000000000: not the learner's event: the learner has started cycles only through 1": 1,
		"cycle.ended of cycle 9000000000000000000: not the learner's event: the learner has ended cycles only through -1": 1,
		"cycle.ended of cycle 1: not the learner's event: the learner has ended cycles only through -1":                   1} {
		if got := len(slices.DeleteFunc(slices.Clone(reasons), func(r string) bool { return !strings.Contains(r, want) })); got != n {
			t.Errorf("dead letters %q: %d say %q, want %d", reasons, got, want, n)
		}
	}
	b.publishExplorers(t, 1, 7, 4) // cycle 1's later records
	if st := b.waitRecords(t, 9); st.ClearedThrough != -1 || st.Ingest.Dropped != 0 {
		t.Errorf("after the forgeries: cleared through %d, %d dropped; want -1 and 0", st.ClearedThrough, st.Ingest.Dropped)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	b.startBuffer(t, buffersvc.Config{}) // restarted: nothing is read again to wipe it
	streamstest.EndCycle(t, b.js, "r", 0)
	st := b.waitRecords(t, 7)
	if st.ClearedThrough != 0 || st.Records != 7 {
		t.Errorf("after the learner's cycle.ended(0): %d records, cleared through %d; want cycle 1's 7, through 0", st.Records, st.ClearedThrough)
	}
	if n := len(deadLetterReasons(t, b, 3)); n != 3 {
		t.Errorf("%d dead letters after the restart, want the 3 forgeries once each", n)
	}
	fresh, err := buffersvc.Open(t.TempDir(), buffersvc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	res, err := buffersvc.Rebuild(context.Background(), b.js, fresh, "r", 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.ClearedThrough != 0 || res.Put.Stored != 7 || res.IgnoredEnds != 2 {
		t.Errorf("rebuild %+v: want cleared through 0, 7 stored, the 2 forged cycle.ended events ignored", res)
	}
}

// deadLetterReasons waits for n dead letters of the buffer and returns their reasons.
func deadLetterReasons(t *testing.T, b *bus, n int) []string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var reasons []string
		err := streams.Replay(context.Background(), b.js, streams.ReplayOptions{Run: "r", Subject: "dlq"}, func(m streams.Message) error {
			reasons = append(reasons, m.Headers.Get(streams.HeaderDLQReason))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(reasons) >= n || time.Now().After(deadline) {
			if len(reasons) != n {
				t.Fatalf("dead letters: got %d %q, want %d", len(reasons), reasons, n)
			}
			return reasons
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A buffer whose Pebble directory was lost used to restart silently empty
// while its durable consumer was already past every record. It rebuilds
// the store from RSPO_SWAPPED when it starts.
func TestBufferRebuildsALostStoreOnStart(t *testing.T) {
	b := newBus(t, 0)
	ctx, stop := context.WithCancel(context.Background())
	first, err := buffersvc.NewService(b.nc, b.js, b.store, buffersvc.Config{Run: "r", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- first.Run(ctx) }()
	b.startSwapper(t)
	b.publishExplorers(t, 1, 6, 4)
	b.waitRecords(t, 6)
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	lost, err := buffersvc.Open(t.TempDir(), buffersvc.Options{}) // the old directory is gone
	if err != nil {
		t.Fatal(err)
	}
	defer lost.Close()
	b.store = lost
	b.startBuffer(t, buffersvc.Config{})
	if st := b.waitRecords(t, 6); st.Records != 6 {
		t.Errorf("after restarting on an empty store: %d records, want the 6 it had", st.Records)
	}
}

// A store that outlived its bus's store (a wiped nats/ directory, the same
// run name trained again) used to keep its old clearing watermark and drop
// every record of the new run's first cycles as already cleared, so the
// learner waited out its buffer timeout and trained without the buffer.
// The buffer forgets what the log does not know of.
func TestBufferForgetsARunTheBusDoesNotKnow(t *testing.T) {
	b := newBus(t, 0) // a fresh bus: no consumer of run "r"
	stale, err := swapper.Relabel(swappertest.Explorer("r", 30, 0, 4))
	if err != nil {
		t.Fatal(err)
	}
	e, err := buffersvc.EntryOf(stale, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.Put([]buffersvc.Entry{e}); err != nil {
		t.Fatal(err)
	}
	if err := b.store.ClearThrough("r", 29); err != nil { // the old life got as far as cycle 31
		t.Fatal(err)
	}
	b.startBuffer(t, buffersvc.Config{})
	b.startSwapper(t)
	b.publishExplorers(t, 1, 6, 4)
	st := b.waitRecords(t, 6)
	if st.ClearedThrough != -1 {
		t.Errorf("cleared through %d, want -1: the new run has cleared nothing", st.ClearedThrough)
	}
	if _, ok, err := b.store.Record("r", 30, stale.ID); ok || err != nil {
		t.Errorf("the old life's record is still served (found %v, err %v)", ok, err)
	}
}
