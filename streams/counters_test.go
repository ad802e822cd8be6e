package streams_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// countingCounters is a streams.Counters that counts in atomics.
type countingCounters struct{ handled, retried, dead atomic.Int64 }

func (c *countingCounters) Handled()      { c.handled.Add(1) }
func (c *countingCounters) Retried()      { c.retried.Add(1) }
func (c *countingCounters) DeadLettered() { c.dead.Add(1) }

// outcome decides a message's fate by its update: 1 succeeds, 2 is
// rejected, 3 fails on its first delivery and succeeds on the second.
func outcome(update int64, msg jetstream.Msg) error {
	switch update {
	case 2:
		return streams.Reject(errors.New("not wanted"))
	case 3:
		if md, err := msg.Metadata(); err == nil && md.NumDelivered == 1 {
			return errors.New("try again")
		}
	}
	return nil
}

func decodeOutcome(msg jetstream.Msg) error {
	m, err := schemas.DecodeMetrics(msg.Data())
	if err != nil {
		return err
	}
	return outcome(m.Update, msg)
}

func TestConsumerCounters(t *testing.T) {
	for _, tc := range []struct {
		name    string
		consume func(ctx context.Context, js jetstream.JetStream, cfg streams.ConsumerConfig) error
	}{
		{"Consume", func(ctx context.Context, js jetstream.JetStream, cfg streams.ConsumerConfig) error {
			return streams.Consume(ctx, js, cfg, func(_ context.Context, msg jetstream.Msg) error { return decodeOutcome(msg) })
		}},
		{"ConsumeBatch", func(ctx context.Context, js jetstream.JetStream, cfg streams.ConsumerConfig) error {
			return streams.ConsumeBatch(ctx, js, cfg, func(_ context.Context, msgs []jetstream.Msg) []error {
				errs := make([]error, len(msgs))
				for i, msg := range msgs {
					errs[i] = decodeOutcome(msg)
				}
				return errs
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := streamstest.RunServer(t)
			_, js := streamstest.Connect(t, s)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			for u := int64(1); u <= 3; u++ {
				if _, err := streams.PublishMetrics(ctx, js, metricsEvent("r1", u)); err != nil {
					t.Fatal(err)
				}
			}
			var c countingCounters
			errc := make(chan error, 1)
			go func() {
				errc <- tc.consume(ctx, js, streams.ConsumerConfig{Stream: streams.StreamMetrics, Durable: "counted",
					MaxWait: 100 * time.Millisecond, RetryDelay: time.Millisecond, Counters: &c})
			}()
			deadline := time.Now().Add(20 * time.Second)
			for c.handled.Load() < 2 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			cancel()
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			if h, r, d := c.handled.Load(), c.retried.Load(), c.dead.Load(); h != 2 || r != 1 || d != 1 {
				t.Errorf("handled %d, retried %d, dead-lettered %d; want 2, 1, 1", h, r, d)
			}
		})
	}
}
