package streams_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

func TestConsumeBatchSettlesEachMessageByItsResult(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	sub := streams.Subjects("r1")
	for u := int64(1); u <= 20; u++ {
		if _, err := streams.PublishMetrics(ctx, js, metricsEvent("r1", u)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := streams.Publish(ctx, js, sub.Metrics("learner"), []byte("{not json"), nats.Header{streams.HeaderRun: {"r1"}}); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var sizes []int
	failedOnce := false
	c := newCollector(20)
	h := func(_ context.Context, msgs []jetstream.Msg) []error {
		mu.Lock()
		defer mu.Unlock()
		sizes = append(sizes, len(msgs))
		results := make([]error, len(msgs))
		for i, msg := range msgs {
			m, err := schemas.DecodeMetrics(msg.Data())
			switch {
			case err != nil:
				results[i] = streams.Reject(err)
			case m.Update == 7 && !failedOnce:
				failedOnce = true
				results[i] = errors.New("transient")
			default:
				c.add(fmt.Sprint(m.Update))
			}
		}
		return results
	}
	runBatchConsumer(t, js, streams.ConsumerConfig{
		Stream: streams.StreamMetrics, Durable: "batcher", FilterSubject: sub.MetricsAll,
		Batch: 8, RetryDelay: time.Millisecond,
	}, h)
	got := c.wait(t)
	slices.Sort(got)
	if want := 20; len(slices.Compact(got)) != want {
		t.Errorf("handled %d distinct updates, want %d: %v", len(slices.Compact(got)), want, got)
	}
	dl := waitLastMessage(t, js, streams.StreamDLQ, sub.DLQ("batcher"))
	if reason := dl.Header.Get(streams.HeaderDLQReason); !strings.Contains(reason, "not valid JSON") {
		t.Errorf("dead letter reason %q, want it to say the JSON is invalid", reason)
	}
	mu.Lock()
	if slices.Max(sizes) < 2 {
		t.Errorf("batch sizes %v, want batches of several messages", sizes)
	}
	mu.Unlock()
	waitSettled(t, js, streams.StreamMetrics, "batcher")
}

func TestConsumeBatchFailsEveryMessageOnBadResults(t *testing.T) {
	tests := []struct {
		name string
		h    streams.BatchHandler
		want string
	}{
		{"panic", func(context.Context, []jetstream.Msg) []error { panic("boom") }, "panicked: boom"},
		{"short results", func(context.Context, []jetstream.Msg) []error { return []error{} }, "returned 0 results for 1 messages"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := streamstest.RunServer(t)
			_, js := streamstest.Connect(t, s)
			if _, err := streams.PublishMetrics(context.Background(), js, metricsEvent("r1", 1)); err != nil {
				t.Fatal(err)
			}
			runBatchConsumer(t, js, streams.ConsumerConfig{Stream: streams.StreamMetrics, Durable: "bad", MaxDeliver: 1}, tt.h)
			dl := waitLastMessage(t, js, streams.StreamDLQ, streams.Subjects("r1").DLQ("bad"))
			if reason := dl.Header.Get(streams.HeaderDLQReason); !strings.Contains(reason, tt.want) {
				t.Errorf("got reason %q, want it to contain %q", reason, tt.want)
			}
		})
	}
}

func runBatchConsumer(t *testing.T, js jetstream.JetStream, cfg streams.ConsumerConfig, h streams.BatchHandler) {
	t.Helper()
	cfg.MaxWait = testMaxWait(cfg.MaxWait)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- streams.ConsumeBatch(ctx, js, cfg, h) }()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("ConsumeBatch returned %v, want nil after cancel", err)
		}
	})
}

// waitSettled waits until the consumer has nothing pending or unacked.
func waitSettled(t *testing.T, js jetstream.JetStream, stream, durable string) {
	t.Helper()
	var info *jetstream.ConsumerInfo
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		info = consumerInfo(t, js, stream, durable)
		if info.NumAckPending == 0 && info.NumPending == 0 {
			return
		}
	}
	t.Errorf("consumer left %d unacked, %d pending; want 0, 0", info.NumAckPending, info.NumPending)
}
