package buffersvc_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/buffersvc"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/swapper"
	"github.com/rspo-dev/rspo/swapper/swappersvc"
	"github.com/rspo-dev/rspo/swapper/swappertest"
)

// BenchmarkSwapper measures the swapper stage alone on the bus: b.N
// explorer trajectories (32 steps) are stored on the explore subject first,
// then a swapper starts and the clock and the process's CPU time run until
// the swapped stream holds every record. cpu-µs/traj is the CPU of the
// swapper and of the embedded server's share (delivering, storing) per
// trajectory.
func BenchmarkSwapper(b *testing.B) {
	bs := newBus(b, 0)
	msgs := make([]*nats.Msg, b.N)
	sub := streams.Subjects("r")
	for i := range b.N {
		tr := swappertest.Explorer("r", 1, i, benchSteps)
		msgs[i] = &nats.Msg{Subject: sub.TrajExplore, Data: swappertest.Encode(tr), Header: streams.TrajectoryHeaders(tr)}
	}
	publishAll(b, bs.js, msgs)
	b.SetBytes(int64(len(msgs[0].Data)))
	ctx := context.Background()
	swapped, err := bs.js.Stream(ctx, streams.StreamSwapped)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start, cpu := time.Now(), cpuTime(b)
	bs.startSwapper(b)
	for {
		info, err := swapped.Info(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if info.State.Msgs >= uint64(b.N) {
			break
		}
		time.Sleep(500 * time.Microsecond)
	}
	dur, used := time.Since(start), cpuTime(b)-cpu
	b.StopTimer()
	b.ReportMetric(float64(b.N)/dur.Seconds(), "swap-traj/s")
	b.ReportMetric(float64(used.Microseconds())/float64(b.N), "cpu-µs/traj")
}

// BenchmarkSampleUnderIngest measures the latency of sampling 16 records
// through the NATS micro service from a buffer of -bench.records
// trajectories, idle and while explorer trajectories (32 steps) stream
// through the swapper into the same buffer (another cycle) as fast as
// they are acknowledged.
func BenchmarkSampleUnderIngest(b *testing.B) {
	store := bigStore(b)
	for _, ingest := range []bool{false, true} {
		b.Run(fmt.Sprintf("ingest=%v", ingest), func(b *testing.B) {
			bs := newBus(b, 0)
			ownConsumer(b, bs.js)
			svc, err := buffersvc.NewService(bs.nc, bs.js, store, buffersvc.Config{Run: "r", Logger: quiet})
			if err != nil {
				b.Fatal(err)
			}
			run(b, "buffer", svc.Run)
			waitServing(b, bs.client)
			ctx, stop := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			if ingest {
				sw, err := swappersvc.New(bs.js, swappersvc.Config{Run: "r", Logger: quiet})
				if err != nil {
					b.Fatal(err)
				}
				run(b, "swapper", sw.Run)
				wg.Go(func() { feed(ctx, b, bs.js) })
				for svc.Counters().Stored == 0 {
					time.Sleep(time.Millisecond) // sample only once records flow
				}
			}
			before, start := svc.Counters().Stored, time.Now()
			latencies(b, func(i int) error {
				ts, err := bs.client.Sample(ctx, buffersvc.SampleRequest{Cycle: 1, Count: 16, Seed: int64(i)})
				if err == nil && len(ts) != 16 {
					err = fmt.Errorf("got %d records, want 16", len(ts))
				}
				return err
			})
			stored := svc.Counters().Stored - before
			stop()
			wg.Wait()
			if ingest {
				b.ReportMetric(float64(stored)/time.Since(start).Seconds(), "ingest-traj/s")
			}
		})
	}
}

// feedCycle is the cycle feed publishes in, apart from bigStore's.
var feedCycle int64 = 2

// feed publishes new explorer trajectories of feedCycle until ctx ends,
// keeping at most 256 unacknowledged.
func feed(ctx context.Context, b *testing.B, js jetstream.JetStream) {
	sub := streams.Subjects("r")
	cycle := feedCycle
	feedCycle++ // every run's records are new, not duplicates
	for i := 0; ctx.Err() == nil; i++ {
		tr := swappertest.Explorer("r", cycle, i, benchSteps)
		m := &nats.Msg{Subject: sub.TrajExplore, Data: swappertest.Encode(tr), Header: streams.TrajectoryHeaders(tr)}
		for {
			_, err := js.PublishMsgAsync(m, jetstream.WithStallWait(time.Second))
			if errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
				select {
				case <-js.PublishAsyncComplete():
				case <-ctx.Done():
					return
				}
				continue
			}
			if err != nil {
				if ctx.Err() == nil {
					b.Error(err)
				}
				return
			}
			break
		}
	}
}

// BenchmarkSampleFromStream measures what keying the buffer's records to
// their RSPO_SWAPPED sequence, instead of storing them in Pebble, would
// cost a sample: the 16 sampled records fetched from the stream by
// sequence, all 16 requests in flight at once, from a stream of
// -bench.records swapped 32-step records.
func BenchmarkSampleFromStream(b *testing.B) {
	bs := newBus(b, 0)
	n := *benchRecords
	msgs := make([]*nats.Msg, n)
	sub := streams.Subjects("r")
	for i := range msgs {
		r, err := swapper.Relabel(swappertest.Explorer("r", 1, i, benchSteps))
		if err != nil {
			b.Fatal(err)
		}
		msgs[i] = &nats.Msg{Subject: sub.Swapped, Data: swappertest.Encode(r), Header: nats.Header{streams.HeaderMsgID: {r.ID}}}
	}
	publishAll(b, bs.js, msgs)
	ctx := context.Background()
	stream, err := bs.js.Stream(ctx, streams.StreamSwapped)
	if err != nil {
		b.Fatal(err)
	}
	latencies(b, func(seed int) error {
		rng := rand.New(rand.NewPCG(uint64(seed), 1))
		errs := make([]error, 16)
		var wg sync.WaitGroup
		for k := range errs {
			seq := uint64(1 + rng.IntN(n))
			wg.Go(func() {
				m, err := stream.GetMsg(ctx, seq)
				if err == nil && len(m.Data) == 0 {
					err = fmt.Errorf("message %d is empty", seq)
				}
				errs[k] = err
			})
		}
		wg.Wait()
		return errors.Join(errs...)
	})
}
