package streams_test

import (
	"context"
	"errors"
	"fmt"
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

// collector records what a handler saw and signals when it has seen n.
type collector struct {
	mu   sync.Mutex
	got  []string
	want int
	done chan struct{}
}

func newCollector(want int) *collector { return &collector{want: want, done: make(chan struct{})} }

func (c *collector) add(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, s)
	if len(c.got) == c.want {
		close(c.done)
	}
}

func (c *collector) wait(t *testing.T) []string {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out: handled %d messages, want %d", len(c.got), c.want)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.got...)
}

// runConsumer runs Consume in the background and returns a stop function
// that cancels it and returns its error.
func runConsumer(t *testing.T, js jetstream.JetStream, cfg streams.ConsumerConfig, h streams.Handler) func() error {
	t.Helper()
	cfg.MaxWait = testMaxWait(cfg.MaxWait)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- streams.Consume(ctx, js, cfg, h) }()
	var once sync.Once
	var err error
	stop := func() error {
		once.Do(func() { cancel(); err = <-errc })
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

// testMaxWait shortens the pull expiry, which bounds how long a consumer
// takes to stop, so tests end quickly.
func testMaxWait(d time.Duration) time.Duration {
	if d == 0 {
		return 100 * time.Millisecond
	}
	return d
}

func metricsEvent(run string, update int64) schemas.MetricsEvent {
	return schemas.MetricsEvent{
		Run: run, Component: "learner", Kind: "update", Update: update,
		Time: time.Unix(1700000000+update, 0).UTC(), Values: map[string]float64{"loss": float64(update)},
	}
}

func TestConsumeRejectGoesToDLQAndConsumerContinues(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	sub := streams.Subjects("r1")

	if _, err := streams.PublishMetrics(ctx, js, metricsEvent("r1", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := streams.Publish(ctx, js, sub.Metrics("learner"), []byte("{not json"), nats.Header{streams.HeaderRun: {"r1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := streams.PublishMetrics(ctx, js, metricsEvent("r1", 2)); err != nil {
		t.Fatal(err)
	}

	c := newCollector(2)
	stop := runConsumer(t, js, streams.ConsumerConfig{
		Stream: streams.StreamMetrics, Durable: "reporter", FilterSubject: sub.MetricsAll,
	}, func(_ context.Context, msg jetstream.Msg) error {
		m, err := schemas.DecodeMetrics(msg.Data())
		if err != nil {
			return streams.Reject(err)
		}
		c.add(fmt.Sprint(m.Update))
		return nil
	})
	if got := strings.Join(c.wait(t), ","); got != "1,2" {
		t.Fatalf("handled updates %s, want 1,2", got)
	}
	if err := stop(); err != nil {
		t.Fatalf("Consume returned %v, want nil after cancel", err)
	}

	dl := lastMessage(t, js, streams.StreamDLQ, sub.DLQ("reporter"))
	if got := string(dl.Data); got != "{not json" {
		t.Errorf("dead letter payload: got %q, want the original", got)
	}
	reason := dl.Header.Get(streams.HeaderDLQReason)
	if !strings.Contains(reason, "not valid JSON") {
		t.Errorf("dead letter reason: got %q, want it to say the JSON is invalid", reason)
	}
	for k, want := range map[string]string{
		streams.HeaderDLQSubject: sub.Metrics("learner"), streams.HeaderDLQStream: streams.StreamMetrics,
		streams.HeaderDLQSeq: "2", streams.HeaderDLQComponent: "reporter", streams.HeaderRun: "r1",
	} {
		if got := dl.Header.Get(k); got != want {
			t.Errorf("dead letter header %s: got %q, want %q", k, got, want)
		}
	}
	info := consumerInfo(t, js, streams.StreamMetrics, "reporter")
	if info.NumAckPending != 0 || info.NumPending != 0 {
		t.Errorf("consumer left %d unacked, %d pending; want 0, 0", info.NumAckPending, info.NumPending)
	}
}

func TestConsumeRetriesThenDeadLetters(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	if _, err := streams.PublishMetrics(ctx, js, metricsEvent("r1", 7)); err != nil {
		t.Fatal(err)
	}
	c := newCollector(3)
	runConsumer(t, js, streams.ConsumerConfig{
		Stream: streams.StreamMetrics, Durable: "flaky", MaxDeliver: 3, RetryDelay: time.Millisecond,
	}, func(_ context.Context, msg jetstream.Msg) error {
		c.add("try")
		return errors.New("database unavailable")
	})
	c.wait(t)
	dl := waitLastMessage(t, js, streams.StreamDLQ, streams.Subjects("r1").DLQ("flaky"))
	reason := dl.Header.Get(streams.HeaderDLQReason)
	if want := "failed 3 deliveries, last error: database unavailable"; reason != want {
		t.Errorf("got reason %q, want %q", reason, want)
	}
	if got := dl.Header.Get(streams.HeaderDLQDeliveries); got != "3" {
		t.Errorf("got deliveries %q, want 3", got)
	}
}

func TestConsumeRecoversFromPanics(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	if _, err := streams.PublishMetrics(context.Background(), js, metricsEvent("r1", 1)); err != nil {
		t.Fatal(err)
	}
	runConsumer(t, js, streams.ConsumerConfig{
		Stream: streams.StreamMetrics, Durable: "panicky", MaxDeliver: 1,
	}, func(context.Context, jetstream.Msg) error { panic("boom") })
	dl := waitLastMessage(t, js, streams.StreamDLQ, streams.Subjects("r1").DLQ("panicky"))
	if reason := dl.Header.Get(streams.HeaderDLQReason); !strings.Contains(reason, "panicked: boom") {
		t.Errorf("got reason %q, want it to mention the panic", reason)
	}
}

func TestConsumeConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  streams.ConsumerConfig
		want string
	}{
		{"no stream", streams.ConsumerConfig{Durable: "d"}, "needs a stream"},
		{"no durable", streams.ConsumerConfig{Stream: streams.StreamTraj}, "needs a durable name"},
		{"bad component", streams.ConsumerConfig{Stream: streams.StreamTraj, Durable: "d", Component: "a.b"}, "component"},
		{"negative batch", streams.ConsumerConfig{Stream: streams.StreamTraj, Durable: "d", Batch: -1}, "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := streams.Consume(context.Background(), nil, tt.cfg, nil)
			if !errors.Is(err, streams.ErrInvalidConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want ErrInvalidConfig mentioning %q", err, tt.want)
			}
		})
	}
}

func lastMessage(t *testing.T, js jetstream.JetStream, stream, subject string) *jetstream.RawStreamMsg {
	t.Helper()
	st, err := js.Stream(context.Background(), stream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetLastMsgForSubject(context.Background(), subject)
	if err != nil {
		t.Fatalf("last message on %s: %v", subject, err)
	}
	return m
}

// waitLastMessage polls for the last message on subject: the consumer
// under test writes it asynchronously.
func waitLastMessage(t *testing.T, js jetstream.JetStream, stream, subject string) *jetstream.RawStreamMsg {
	t.Helper()
	st, err := js.Stream(context.Background(), stream)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m, err := st.GetLastMsgForSubject(context.Background(), subject); err == nil {
			return m
		}
	}
	t.Fatalf("no message on %s", subject)
	return nil
}

func consumerInfo(t *testing.T, js jetstream.JetStream, stream, name string) *jetstream.ConsumerInfo {
	t.Helper()
	c, err := js.Consumer(context.Background(), stream, name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func TestConsumeMalformedTrajectoryLandsInDLQ(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	sub := streams.Subjects("r1")
	good := []*schemas.Trajectory{streamstest.Trajectory("r1", schemas.SourceExplore, 1), streamstest.Trajectory("r1", schemas.SourceExplore, 2)}
	if _, err := streams.PublishTrajectory(ctx, js, good[0]); err != nil {
		t.Fatal(err)
	}
	hdr := streams.TrajectoryHeaders(streamstest.Trajectory("r1", schemas.SourceExplore, 99))
	if _, err := streams.Publish(ctx, js, sub.TrajExplore, []byte("definitely not arrow"), hdr); err != nil {
		t.Fatal(err)
	}
	if _, err := streams.PublishTrajectory(ctx, js, good[1]); err != nil {
		t.Fatal(err)
	}

	c := newCollector(2)
	runConsumer(t, js, streams.ConsumerConfig{
		Stream: streams.StreamTraj, Durable: "swapper", FilterSubject: sub.TrajExplore, Batch: 2,
	}, func(_ context.Context, msg jetstream.Msg) error {
		tr, err := schemas.DecodeTrajectory(msg.Data())
		if err != nil {
			return streams.Reject(err)
		}
		c.add(tr.ID)
		return nil
	})
	if got, want := strings.Join(c.wait(t), ","), good[0].ID+","+good[1].ID; got != want {
		t.Fatalf("handled %s, want %s", got, want)
	}
	dl := waitLastMessage(t, js, streams.StreamDLQ, sub.DLQ("swapper"))
	reason := dl.Header.Get(streams.HeaderDLQReason)
	if !strings.HasPrefix(reason, "schemas: cannot decode") {
		t.Errorf("got reason %q, want the decoder's error", reason)
	}
	if got := dl.Header.Get(streams.HeaderDLQMsgID); got != hdr.Get(streams.HeaderMsgID) {
		t.Errorf("got original id %q, want %q", got, hdr.Get(streams.HeaderMsgID))
	}
	if got := string(dl.Data); got != "definitely not arrow" {
		t.Errorf("got payload %q, want the original", got)
	}
}

func TestConsumeDrainsInFlightMessageOnCancel(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	if _, err := streams.PublishMetrics(context.Background(), js, metricsEvent("r1", 1)); err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	var handlerCtxErr error
	stop := runConsumer(t, js, streams.ConsumerConfig{Stream: streams.StreamMetrics, Durable: "slow"},
		func(ctx context.Context, _ jetstream.Msg) error {
			close(started)
			<-release
			handlerCtxErr = ctx.Err()
			return nil
		})
	<-started
	done := make(chan error, 1)
	go func() { done <- stop() }()
	time.Sleep(50 * time.Millisecond) // let the cancel land while the handler runs
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("Consume returned %v, want nil", err)
	}
	if handlerCtxErr != nil {
		t.Errorf("handler context was %v while draining, want live", handlerCtxErr)
	}
	info := consumerInfo(t, js, streams.StreamMetrics, "slow")
	if info.AckFloor.Stream != 1 || info.NumAckPending != 0 {
		t.Errorf("got ack floor %d with %d pending acks, want the drained message acked", info.AckFloor.Stream, info.NumAckPending)
	}
}

func TestConsumeDrainTimeoutCancelsHandler(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	if _, err := streams.PublishMetrics(context.Background(), js, metricsEvent("r1", 1)); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	stop := runConsumer(t, js, streams.ConsumerConfig{Stream: streams.StreamMetrics, Durable: "stuck", DrainTimeout: 10 * time.Millisecond},
		func(ctx context.Context, _ jetstream.Msg) error {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		})
	<-started
	if err := stop(); err != nil {
		t.Fatalf("Consume returned %v, want nil", err)
	}
	info := consumerInfo(t, js, streams.StreamMetrics, "stuck")
	if info.AckFloor.Stream != 0 {
		t.Errorf("got ack floor %d, want the unfinished message not acked", info.AckFloor.Stream)
	}
	if n := streamMsgs(t, js, streams.StreamDLQ); n != 0 {
		t.Errorf("got %d dead letters, want none for a message cut off by shutdown", n)
	}
}

// With GiveBack a stop does not wait for the message in hand: the
// handler's context ends with the consumer's, however long the drain
// would allow, and the message goes back to the stream at once for the
// next instance, neither acknowledged nor dead-lettered.
func TestConsumeGiveBackEndsTheHandlerAtOnce(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	if _, err := streams.PublishMetrics(context.Background(), js, metricsEvent("r1", 1)); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	cfg := streams.ConsumerConfig{Stream: streams.StreamMetrics, Durable: "long", DrainTimeout: time.Hour, GiveBack: true}
	stop := runConsumer(t, js, cfg, func(ctx context.Context, _ jetstream.Msg) error {
		close(started)
		<-ctx.Done()
		return ctx.Err()
	})
	<-started
	done := make(chan error, 1)
	go func() { done <- stop() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Consume returned %v, want nil", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Consume with GiveBack kept its handler running after the stop, as for a drain of an hour")
	}
	again := make(chan jetstream.Msg, 1)
	runConsumer(t, js, cfg, func(_ context.Context, msg jetstream.Msg) error {
		again <- msg
		return nil
	})
	select {
	case msg := <-again:
		if md, err := msg.Metadata(); err != nil || md.NumDelivered != 2 {
			t.Errorf("redelivered message metadata %+v (%v), want its second delivery", md, err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the message given back was not delivered to the next consumer before its ack wait")
	}
	if n := streamMsgs(t, js, streams.StreamDLQ); n != 0 {
		t.Errorf("got %d dead letters, want none for a message given back", n)
	}
}

func streamMsgs(t *testing.T, js jetstream.JetStream, stream string) uint64 {
	t.Helper()
	st, err := js.Stream(context.Background(), stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// A consumer stopped while it is still being created stops cleanly, as
// one stopped between fetches does: a service told to stop as it starts
// (a test's cleanup, a Ctrl-C) returns nil, not "context canceled".
func TestConsumeStoppedWhileStartingReturnsNil(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := streams.Consume(ctx, js, streams.ConsumerConfig{Stream: streams.StreamMetrics, Durable: "late"},
		func(context.Context, jetstream.Msg) error { return nil })
	if err != nil {
		t.Errorf("Consume stopped while starting returned %v, want nil", err)
	}
}

// A metrics event with an ID is stored once when published again (work
// redone after a restart); events without one are all stored, and the same
// ID in another run or component is another event.
func TestPublishMetricsWithIDStoresOnce(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	withID := func(run, component string) schemas.MetricsEvent {
		m := metricsEvent(run, 3)
		m.Component, m.ID = component, "update/u3"
		return m
	}
	for i, c := range []struct {
		m   schemas.MetricsEvent
		dup bool
	}{
		{withID("r1", "learner"), false}, {withID("r1", "learner"), true}, {withID("r2", "learner"), false},
		{withID("r1", "explorer"), false}, {metricsEvent("r1", 3), false}, {metricsEvent("r1", 3), false},
	} {
		ack, err := streams.PublishMetrics(ctx, js, c.m)
		if err != nil {
			t.Fatal(err)
		}
		if ack.Duplicate != c.dup {
			t.Errorf("publish %d: duplicate %v, want %v", i, ack.Duplicate, c.dup)
		}
	}
}
