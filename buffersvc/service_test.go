package buffersvc_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nats.go/micro"

	"github.com/rspo-dev/rspo/buffersvc"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
	"github.com/rspo-dev/rspo/swapper"
	"github.com/rspo-dev/rspo/swapper/swappersvc"
	"github.com/rspo-dev/rspo/swapper/swappertest"
)

var quiet = slog.New(slog.DiscardHandler)

// bus is an in-process JetStream with a store and the run's services.
type bus struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	store  *buffersvc.Store
	client *buffersvc.Client
}

func newBus(t testing.TB, maxPayload int32) *bus {
	t.Helper()
	e, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: t.TempDir(), Port: -1, MaxPayload: maxPayload})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Shutdown)
	nc, js := streamstest.Connect(t, e.Server())
	store, err := buffersvc.Open(t.TempDir(), buffersvc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	client, err := buffersvc.NewClient(nc, "r")
	if err != nil {
		t.Fatal(err)
	}
	return &bus{nc: nc, js: js, store: store, client: client}
}

// run starts fn in the background and stops it when the test ends.
func run(t testing.TB, name string, fn func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- fn(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("%s returned %v, want nil after cancel", name, err)
		}
	})
}

func (b *bus) startBuffer(t testing.TB, cfg buffersvc.Config) *buffersvc.Service {
	t.Helper()
	cfg.Run, cfg.Logger = "r", quiet
	svc, err := buffersvc.NewService(b.nc, b.js, b.store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	run(t, "buffer", svc.Run)
	return svc
}

func (b *bus) startSwapper(t testing.TB) {
	t.Helper()
	svc, err := swappersvc.New(b.js, swappersvc.Config{Run: "r", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	run(t, "swapper", svc.Run)
}

func (b *bus) publishExplorers(t *testing.T, cycle int64, n, steps int) []*schemas.Trajectory {
	t.Helper()
	var ts []*schemas.Trajectory
	for i := range n {
		tr := swappertest.Explorer("r", cycle, i, steps)
		if _, err := streams.PublishTrajectory(context.Background(), b.js, tr); err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tr)
	}
	return ts
}

// waitRecords polls the stats endpoint until the buffer holds n records.
func (b *bus) waitRecords(t *testing.T, n int64) buffersvc.Stats {
	t.Helper()
	var st buffersvc.Stats
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		st, err = b.client.Stats(context.Background())
		if err == nil && st.Records == n {
			return st
		}
	}
	t.Fatalf("buffer stats %+v (err %v), want %d records", st, err, n)
	return st
}

func prio(t *schemas.Trajectory) string {
	return fmt.Sprintf("reward=%g distinct=%d repeats=%d", t.OutcomeReward, t.DistinctStates, t.RepeatedVisits)
}

// ranked returns the relabelled trajectories in the documented priority
// order, ties in id order.
func ranked(t *testing.T, ts []*schemas.Trajectory) []*schemas.Trajectory {
	t.Helper()
	var out []*schemas.Trajectory
	for _, tr := range ts {
		r, err := swapper.Relabel(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b *schemas.Trajectory) int {
		switch {
		case a.OutcomeReward != b.OutcomeReward:
			return -cmpF(a.OutcomeReward, b.OutcomeReward)
		case a.DistinctStates != b.DistinctStates:
			return int(b.DistinctStates - a.DistinctStates)
		}
		return int(a.RepeatedVisits - b.RepeatedVisits)
	})
	return out
}

func cmpF(a, b float64) int {
	if a < b {
		return -1
	}
	return 1
}

func TestExplorerTrajectoriesComeOutAsPrioritizedSamples(t *testing.T) {
	b := newBus(t, 0)
	b.startSwapper(t)
	b.startBuffer(t, buffersvc.Config{Batch: 16})
	in := b.publishExplorers(t, 1, 60, 32)
	b.publishExplorers(t, 2, 5, 32)
	st := b.waitRecords(t, 65)
	if len(st.Cycles) != 2 || st.Cycles[0].Records != 60 || st.Cycles[1].Records != 5 {
		t.Errorf("cycles %+v, want 60 records in cycle 1 and 5 in cycle 2", st.Cycles)
	}
	want := ranked(t, in)
	got, err := b.client.Sample(context.Background(), buffersvc.SampleRequest{Cycle: 1, Count: 16, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 16 {
		t.Fatalf("got %d records, want 16", len(got))
	}
	byID := map[string]*schemas.Trajectory{}
	for _, w := range want {
		byID[w.ID] = w
	}
	for i, g := range got {
		if prio(g) != prio(want[i]) {
			t.Errorf("record %d: got %s, want %s (the %d-th best)", i, prio(g), prio(want[i]), i)
		}
		if w := byID[g.ID]; fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("record %d (%s) differs from its relabelled trajectory", i, g.ID)
		}
	}

	prefer := want[len(want)-1].TaskID
	got, err = b.client.Sample(context.Background(), buffersvc.SampleRequest{Cycle: 1, Count: 6, Seed: 5, PreferTasks: []string{prefer}})
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range got[:3] { // 60 trajectories over 16 tasks: ≥ 3 per task
		if g.TaskID != prefer {
			t.Errorf("record %d has task %s, want the preferred %s first", i, g.TaskID, prefer)
		}
	}
}

func TestSampleReplyLargerThanMaxPayloadArrivesInParts(t *testing.T) {
	const maxPayload = 24 << 10
	b := newBus(t, maxPayload)
	b.startSwapper(t)
	b.startBuffer(t, buffersvc.Config{})
	in := b.publishExplorers(t, 0, 40, 32)
	b.waitRecords(t, 40)

	// Watch the reply inboxes to see the parts go by.
	parts := make(chan *nats.Msg, 1000)
	watch, err := b.nc.ChanSubscribe("_INBOX.>", parts)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Unsubscribe()
	got, err := b.client.Sample(context.Background(), buffersvc.SampleRequest{Cycle: 0, Count: 40, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 40 {
		t.Fatalf("got %d records, want all 40", len(got))
	}
	ids := map[string]bool{}
	for _, g := range got {
		ids[g.ID] = true
	}
	for _, tr := range in {
		if !ids[tr.ID] {
			t.Errorf("record %s missing from the reassembled reply", tr.ID)
		}
	}
	var n, total int
	for len(parts) > 0 {
		m := <-parts
		if m.Header.Get(buffersvc.HeaderPart) != "" {
			n++
			total += len(m.Data)
			if len(m.Data) > maxPayload {
				t.Errorf("a part of %d bytes exceeds max_payload %d", len(m.Data), maxPayload)
			}
		}
	}
	if n < 2 || total <= maxPayload {
		t.Errorf("reply came in %d parts totalling %d bytes; want several parts of a reply larger than %d", n, total, maxPayload)
	}
}

func TestBufferDeadLettersWhatIsNotARecord(t *testing.T) {
	b := newBus(t, 0)
	svc := b.startBuffer(t, buffersvc.Config{})
	ctx := context.Background()
	good := func(i int) *schemas.Trajectory {
		r, err := swapper.Relabel(swappertest.Explorer("r", 0, i, 8))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	notSwapped := swappertest.Explorer("r", 0, 1, 8)
	dense := good(2)
	dense.Steps[0].Reward = 0.3
	inflated := good(3)
	inflated.DistinctStates, inflated.RepeatedVisits = 8, 0
	other := good(4)
	other.Run = "other"
	bad := []struct {
		name, reason string
		data         []byte
	}{
		{"bad arrow", "cannot decode", []byte{0xff, 0xff, 0xff, 0xff, 1, 2, 3}},
		{"schema version", "schema version", swappertest.WithSchemaVersion(good(5), "0")},
		{"NaN reward", "NaN", swappertest.WithNaNReward(good(6))},
		{"not swapped", "not swapped", swappertest.Encode(notSwapped)},
		{"dense labels", "outcome form", swappertest.Encode(dense)},
		{"inflated priority", "state keys give", swappertest.Encode(inflated)},
		{"other run", "belongs to run", swappertest.Encode(other)},
	}
	sub := streams.Subjects("r")
	for _, x := range bad {
		h := nats.Header{streams.HeaderMsgID: {x.name}}
		if _, err := streams.Publish(ctx, b.js, sub.Swapped, x.data, h); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := streams.PublishSwapped(ctx, b.js, good(7)); err != nil {
		t.Fatal(err)
	}
	b.waitRecords(t, 1)
	st, err := b.js.Stream(ctx, streams.StreamDLQ)
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for deadline := time.Now().Add(20 * time.Second); len(reasons) < len(bad) && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for seq := uint64(1); seq <= uint64(len(bad)); seq++ {
			if m, err := st.GetMsg(ctx, seq); err == nil {
				reasons[m.Header.Get(streams.HeaderDLQMsgID)] = m.Header.Get(streams.HeaderDLQReason)
			}
		}
	}
	for _, x := range bad {
		if !strings.Contains(reasons[x.name], x.reason) {
			t.Errorf("%s: dead-letter reason %q, want it to mention %q", x.name, reasons[x.name], x.reason)
		}
	}
	if c := svc.Counters(); c.DeadLettered != int64(len(bad)) || c.Stored != 1 {
		t.Errorf("counters %+v, want %d dead-lettered and 1 stored", c, len(bad))
	}
}

func TestCycleEndedClearsOldCycles(t *testing.T) {
	tests := []struct {
		name       string
		keep       int
		wantCycles []int64
	}{
		{"paper default", 0, []int64{3}},
		{"keep one", 1, []int64{2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBus(t, 0)
			b.startSwapper(t)
			b.startBuffer(t, buffersvc.Config{KeepCycles: tt.keep})
			for c := int64(1); c <= 3; c++ {
				b.publishExplorers(t, c, 4, 4)
			}
			b.waitRecords(t, 12)
			streamstest.StartCycles(t, b.js, "r", 3)
			streamstest.EndCycle(t, b.js, "r", 2)
			st := b.waitRecords(t, int64(4*len(tt.wantCycles)))
			var cycles []int64
			for _, c := range st.Cycles {
				cycles = append(cycles, c.Cycle)
			}
			if !slices.Equal(cycles, tt.wantCycles) || st.ClearedThrough != 2-int64(tt.keep) {
				t.Errorf("after cycle.ended(2): cycles %v cleared through %d, want %v through %d",
					cycles, st.ClearedThrough, tt.wantCycles, 2-tt.keep)
			}
			// A late record of a cleared cycle stays out.
			late, _ := swapper.Relabel(swappertest.Explorer("r", 1, 99, 4))
			if _, err := streams.PublishSwapped(context.Background(), b.js, late); err != nil {
				t.Fatal(err)
			}
			waitIngest(t, b, func(c buffersvc.IngestCounters) bool { return c.Dropped == 1 })
		})
	}
}

func waitIngest(t *testing.T, b *bus, ok func(buffersvc.IngestCounters) bool) {
	t.Helper()
	var st buffersvc.Stats
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		st, _ = b.client.Stats(context.Background())
		if ok(st.Ingest) {
			return
		}
	}
	t.Fatalf("ingest counters %+v never reached the expected state", st.Ingest)
}

func TestRebuildReproducesTheBuffer(t *testing.T) {
	b := newBus(t, 0)
	b.startSwapper(t)
	b.startBuffer(t, buffersvc.Config{})
	for c := int64(0); c < 3; c++ {
		b.publishExplorers(t, c, 20, 8)
	}
	b.waitRecords(t, 60)
	streamstest.StartCycles(t, b.js, "r", 2)
	streamstest.EndCycle(t, b.js, "r", 0)
	live := b.waitRecords(t, 40)

	fresh, err := buffersvc.Open(t.TempDir(), buffersvc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	res, err := buffersvc.Rebuild(context.Background(), b.js, fresh, "r", 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Read != 60 || res.Put.Stored != 40 || res.Put.Dropped != 20 || res.ClearedThrough != 0 {
		t.Errorf("rebuild result %+v, want 60 read, 40 stored, 20 dropped, cleared through 0", res)
	}
	rebuilt, err := fresh.Stats("r")
	if err != nil {
		t.Fatal(err)
	}
	live.Ingest, live.SamplesServed = buffersvc.IngestCounters{}, 0
	if fmt.Sprint(rebuilt) != fmt.Sprint(live) {
		t.Errorf("rebuilt stats %+v, want the live %+v", rebuilt, live)
	}
	for c := int64(1); c < 3; c++ {
		want, _ := b.store.IDs("r", c)
		got, _ := fresh.IDs("r", c)
		if !slices.Equal(got, want) {
			t.Errorf("cycle %d: rebuilt ids %v, want %v", c, got, want)
		}
		for _, id := range want {
			x, _, _ := b.store.Record("r", c, id)
			y, _, _ := fresh.Record("r", c, id)
			if !bytes.Equal(x, y) {
				t.Errorf("cycle %d record %s differs after rebuild", c, id)
			}
		}
	}
}

func TestClientErrors(t *testing.T) {
	b := newBus(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	once := b.client.WithTimeouts(5*time.Second, 0) // a single attempt: no retry while nobody answers
	if _, err := once.Sample(ctx, buffersvc.SampleRequest{Count: 1}); !errors.Is(err, buffersvc.ErrNoResponders) {
		t.Errorf("Sample without a service: %v, want ErrNoResponders", err)
	}
	if _, err := once.Stats(ctx); !errors.Is(err, buffersvc.ErrNoResponders) {
		t.Errorf("Stats without a service: %v, want ErrNoResponders", err)
	}
	if _, err := b.client.Sample(ctx, buffersvc.SampleRequest{Count: 0}); !errors.Is(err, buffersvc.ErrBadRequest) {
		t.Errorf("Sample with count 0: %v, want ErrBadRequest", err)
	}
	b.startBuffer(t, buffersvc.Config{})
	b.waitRecords(t, 0)
	reply, err := b.nc.RequestWithContext(ctx, streams.Subjects("r").BufferSample, []byte("{not json"))
	if err != nil {
		t.Fatal(err)
	}
	if code := reply.Header.Get(micro.ErrorCodeHeader); code != "400" {
		t.Errorf("malformed request: error code %q, want 400", code)
	}
	got, err := b.client.Sample(ctx, buffersvc.SampleRequest{Cycle: 5, Count: 3})
	if err != nil || len(got) != 0 {
		t.Errorf("Sample of an empty cycle: %d records, %v; want 0, nil", len(got), err)
	}
	if _, err := buffersvc.NewClient(b.nc, "a.b"); !errors.Is(err, streams.ErrInvalidName) {
		t.Errorf("NewClient with a dotted run: %v, want ErrInvalidName", err)
	}
}
