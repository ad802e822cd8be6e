package streams_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// BenchmarkPublishTrajectory measures synchronous publishes (encode, store,
// wait for the ack) of a three-step trajectory.
func BenchmarkPublishTrajectory(b *testing.B) {
	s := streamstest.RunServer(b)
	_, js := streamstest.Connect(b, s)
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		if _, err := streams.PublishTrajectory(ctx, js, streamstest.Trajectory("bench", schemas.SourceExplore, uint64(i))); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "traj/s")
}

// publishN stores n trajectories of run r with async publishes.
func publishN(b *testing.B, js jetstream.JetStream, n int) {
	b.Helper()
	for i := range n {
		tr := streamstest.Trajectory("r", schemas.SourceExplore, uint64(i))
		data, err := schemas.EncodeTrajectory(tr)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := js.PublishMsgAsync(&nats.Msg{Subject: "rspo.r.traj.explore", Data: data, Header: streams.TrajectoryHeaders(tr)}); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(time.Minute):
		b.Fatal("async publishes did not complete")
	}
}

// BenchmarkConsume measures Consume (decode nothing, double ack) by batch size.
func BenchmarkConsume(b *testing.B) {
	for _, batch := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			s := streamstest.RunServer(b)
			_, js := streamstest.Connect(b, s)
			publishN(b, js, b.N)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var n atomic.Int64
			done, stopped := make(chan struct{}), make(chan error, 1)
			b.ResetTimer()
			go func() {
				stopped <- streams.Consume(ctx, js, streams.ConsumerConfig{Stream: streams.StreamTraj, Durable: "bench", Batch: batch},
					func(context.Context, jetstream.Msg) error {
						if n.Add(1) == int64(b.N) {
							close(done)
						}
						return nil
					})
			}()
			<-done
			b.StopTimer()
			cancel()
			if err := <-stopped; err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

// BenchmarkConsumeBatch measures ConsumeBatch (acks without waiting).
func BenchmarkConsumeBatch(b *testing.B) {
	s := streamstest.RunServer(b)
	_, js := streamstest.Connect(b, s)
	publishN(b, js, b.N)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var n atomic.Int64
	done, stopped := make(chan struct{}), make(chan error, 1)
	b.ResetTimer()
	go func() {
		stopped <- streams.ConsumeBatch(ctx, js, streams.ConsumerConfig{Stream: streams.StreamTraj, Durable: "bench", Batch: 64},
			func(_ context.Context, msgs []jetstream.Msg) []error {
				if n.Add(int64(len(msgs))) == int64(b.N) {
					close(done)
				}
				return nil
			})
	}()
	<-done
	b.StopTimer()
	cancel()
	if err := <-stopped; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkReplay measures Replay of stored trajectories, decoding each.
func BenchmarkReplay(b *testing.B) {
	s := streamstest.RunServer(b)
	_, js := streamstest.Connect(b, s)
	publishN(b, js, b.N)
	b.ResetTimer()
	n := 0
	err := streams.Replay(context.Background(), js, streams.ReplayOptions{Run: "r", Subject: "traj.explore"},
		func(m streams.Message) error {
			if m.Err != nil {
				return m.Err
			}
			n++
			return nil
		})
	if err != nil || n != b.N {
		b.Fatalf("replayed %d of %d: %v", n, b.N, err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "traj/s")
}
