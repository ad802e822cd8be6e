package buffersvc_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/buffersvc"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/swapper"
	"github.com/rspo-dev/rspo/swapper/swappertest"
)

var benchRecords = flag.Int("bench.records", 100_000, "trajectories in the buffer of BenchmarkSample (2,000 with -short)")

// shortBenchRecords is -bench.records under -short, unless the flag is
// given: CI runs every benchmark once with -short, and a 100,000-record
// store (2 GB) would cost it minutes.
const shortBenchRecords = 2_000

// benchSteps is the length of the benchmarks' trajectories.
const benchSteps = 32

// BenchmarkIngest measures, in one run, the raw JetStream async publish rate
// of b.N encoded explorer trajectories (to a subject nobody consumes) and
// the end-to-end ingest rate of the same payloads through the swapper and
// the buffer: from the first publish until the buffer has committed
// (synced) the last record. It runs for 32-step (~19 KB) and 88-step
// (~46 KB) trajectories, and reports the process's CPU time per
// trajectory in each phase (the embedded server, swapper and buffer share
// the process).
func BenchmarkIngest(b *testing.B) {
	for _, steps := range []int{benchSteps, 88} {
		b.Run(fmt.Sprintf("steps=%d", steps), func(b *testing.B) { benchIngest(b, steps) })
	}
}

func benchIngest(b *testing.B, steps int) {
	bs := newBus(b, 0)
	svc := bs.startBuffer(b, buffersvc.Config{})
	bs.startSwapper(b)
	msgs := make([]*nats.Msg, b.N)
	raw := make([]*nats.Msg, b.N)
	sub := streams.Subjects("r")
	for i := range b.N {
		tr := swappertest.Explorer("r", 1, i, steps)
		data := swappertest.Encode(tr)
		msgs[i] = &nats.Msg{Subject: sub.TrajExplore, Data: data, Header: streams.TrajectoryHeaders(tr)}
		raw[i] = &nats.Msg{Subject: sub.TrajOnPolicy, Data: data, Header: nats.Header{streams.HeaderMsgID: {fmt.Sprint("raw-", i)}}}
	}
	b.SetBytes(int64(len(msgs[0].Data)))
	b.ResetTimer()

	start, cpu := time.Now(), cpuTime(b)
	publishAll(b, bs.js, raw)
	rawDur, rawCPU := time.Since(start), cpuTime(b)-cpu

	start, cpu = time.Now(), cpuTime(b)
	publishAll(b, bs.js, msgs)
	for svc.Counters().Stored < int64(b.N) {
		time.Sleep(200 * time.Microsecond)
	}
	ingestDur, ingestCPU := time.Since(start), cpuTime(b)-cpu
	b.StopTimer()

	rawRate, ingestRate := float64(b.N)/rawDur.Seconds(), float64(b.N)/ingestDur.Seconds()
	b.ReportMetric(rawRate, "raw-publish-traj/s")
	b.ReportMetric(ingestRate, "ingest-traj/s")
	b.ReportMetric(ingestRate/rawRate, "ingest/raw")
	b.ReportMetric(float64(rawCPU.Microseconds())/float64(b.N), "raw-cpu-µs/traj")
	b.ReportMetric(float64(ingestCPU.Microseconds())/float64(b.N), "ingest-cpu-µs/traj")
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStorePut measures the store alone: synced commits of batches of
// 256 swapped 32-step records, as the service commits them.
func BenchmarkStorePut(b *testing.B) {
	store, err := buffersvc.Open(b.TempDir(), buffersvc.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	entries := make([]buffersvc.Entry, b.N)
	for i := range entries {
		r, err := swapper.Relabel(swappertest.Explorer("r", 1, i, benchSteps))
		if err != nil {
			b.Fatal(err)
		}
		entries[i], _ = buffersvc.EntryOf(r, swappertest.Encode(r))
	}
	b.SetBytes(int64(len(entries[0].Data)))
	b.ResetTimer()
	for lo := 0; lo < b.N; lo += 256 {
		if _, err := store.Put(entries[lo:min(lo+256, b.N)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// publishAll publishes msgs asynchronously and waits for every ack.
func publishAll(b *testing.B, js jetstream.JetStream, msgs []*nats.Msg) {
	b.Helper()
	futures := make([]jetstream.PubAckFuture, len(msgs))
	for i, m := range msgs {
		for {
			f, err := js.PublishMsgAsync(m)
			if errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
				<-js.PublishAsyncComplete()
				continue
			}
			if err != nil {
				b.Fatal(err)
			}
			futures[i] = f
			break
		}
	}
	<-js.PublishAsyncComplete()
	for _, f := range futures {
		select {
		case err := <-f.Err():
			b.Fatal(err)
		default:
		}
	}
}

// sampleFixture is the buffer of BenchmarkSample, built once per process.
var sampleFixture struct {
	once  sync.Once
	dir   string
	store *buffersvc.Store
	err   error
}

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() && !flagSet("bench.records") {
		*benchRecords = shortBenchRecords
	}
	code := m.Run()
	if sampleFixture.store != nil {
		sampleFixture.store.Close()
		os.RemoveAll(sampleFixture.dir)
	}
	os.Exit(code)
}

// flagSet reports whether the flag was given on the command line.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// bigStore returns a store holding *benchRecords swapped 32-step
// trajectories in cycle 1, written directly (not through the bus) and
// compacted.
func bigStore(b *testing.B) *buffersvc.Store {
	b.Helper()
	f := &sampleFixture
	f.once.Do(func() {
		if f.dir, f.err = os.MkdirTemp("", "buffersvc-bench-"); f.err != nil {
			return
		}
		if f.store, f.err = buffersvc.Open(f.dir, buffersvc.Options{}); f.err != nil {
			return
		}
		const batch = 1000
		for lo := 0; lo < *benchRecords && f.err == nil; lo += batch {
			var entries []buffersvc.Entry
			for i := lo; i < min(lo+batch, *benchRecords); i++ {
				r, err := swapper.Relabel(swappertest.Explorer("r", 1, i, benchSteps))
				if err != nil {
					f.err = err
					return
				}
				e, _ := buffersvc.EntryOf(r, swappertest.Encode(r))
				entries = append(entries, e)
			}
			_, f.err = f.store.Put(entries)
		}
		if f.err == nil {
			f.err = f.store.Compact() // measure a settled store, not the bulk load's compaction debt
		}
	})
	if f.err != nil {
		b.Fatal(f.err)
	}
	return f.store
}

// BenchmarkSample measures the latency of sampling 16 records from a buffer
// of -bench.records trajectories: from the store directly, and through the
// NATS micro service with the Client (request, Arrow IPC reply, decode).
func BenchmarkSample(b *testing.B) {
	store := bigStore(b)
	tasks := []string{fmt.Sprintf("%s/train/3", swappertest.Env), fmt.Sprintf("%s/train/11", swappertest.Env)}
	b.Run("store", func(b *testing.B) {
		latencies(b, func(i int) error {
			_, err := store.Sample("r", buffersvc.SampleRequest{Cycle: 1, Count: 16, Seed: int64(i)})
			return err
		})
	})
	for _, tc := range []struct {
		name   string
		prefer []string
	}{{"client", nil}, {"client-prefer-2-tasks", tasks}} {
		b.Run(tc.name, func(b *testing.B) {
			bs := newBus(b, 0)
			ownConsumer(b, bs.js)
			svc, err := buffersvc.NewService(bs.nc, bs.js, store, buffersvc.Config{Run: "r", Logger: quiet})
			if err != nil {
				b.Fatal(err)
			}
			run(b, "buffer", svc.Run)
			ctx := context.Background()
			waitServing(b, bs.client)
			latencies(b, func(i int) error {
				ts, err := bs.client.Sample(ctx, buffersvc.SampleRequest{Cycle: 1, Count: 16, Seed: int64(i), PreferTasks: tc.prefer})
				if err == nil && len(ts) != 16 {
					err = fmt.Errorf("got %d records, want 16", len(ts))
				}
				return err
			})
		})
	}
}

// ownConsumer creates the buffer's durable consumer of run "r" on the bus,
// as the service that filled bigStore would have: the store was filled
// directly, and a store that holds the run while the bus has no consumer
// of it outlived the run's log, which the service forgets at start.
func ownConsumer(b *testing.B, js jetstream.JetStream) {
	b.Helper()
	_, err := js.CreateOrUpdateConsumer(context.Background(), streams.StreamSwapped, jetstream.ConsumerConfig{
		Durable: "buffer-r", FilterSubject: streams.Subjects("r").Swapped, AckPolicy: jetstream.AckExplicitPolicy,
		MaxDeliver: -1, DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		b.Fatal(err)
	}
}

func waitServing(b *testing.B, c *buffersvc.Client) {
	b.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := c.Stats(context.Background()); err == nil {
			return
		}
	}
	b.Fatal("buffer service did not come up")
}

// latencies runs op b.N times and reports the p50 and p99 latency.
func latencies(b *testing.B, op func(i int) error) {
	b.Helper()
	d := make([]time.Duration, b.N)
	rng := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if err := op(rng.IntN(1 << 30)); err != nil {
			b.Fatal(err)
		}
		d[i] = time.Since(start)
	}
	b.StopTimer()
	slices.Sort(d)
	q := func(p float64) float64 { return float64(d[int(p*float64(len(d)-1))].Microseconds()) }
	b.ReportMetric(q(0.50), "p50-µs")
	b.ReportMetric(q(0.99), "p99-µs")
}
