package streams_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

func TestDeadLetterTwiceStoresOnce(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tr := streamstest.Trajectory("r1", schemas.SourceExplore, 1)
	if _, err := streams.PublishTrajectory(ctx, js, tr); err != nil {
		t.Fatal(err)
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, streams.StreamTraj, jetstream.ConsumerConfig{
		Durable: "swapper", AckPolicy: jetstream.AckExplicitPolicy,
	})
	if err != nil {
		t.Fatal(err)
	}
	msg, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	// A crash between the DLQ publish and the Term makes the service
	// dead-letter the same message again.
	for range 2 {
		if err := streams.DeadLetter(ctx, js, msg, "swapper", "forged outcome"); err != nil {
			t.Fatal(err)
		}
	}
	if n := streamMsgs(t, js, streams.StreamDLQ); n != 1 {
		t.Fatalf("got %d dead letters, want 1", n)
	}
	dl := lastMessage(t, js, streams.StreamDLQ, "rspo.r1.dlq.swapper")
	if got := dl.Header.Get(streams.HeaderDLQMsgID); got != tr.ID {
		t.Errorf("got original id %q, want %q", got, tr.ID)
	}
	if got := dl.Header.Get(streams.HeaderSource); got != "explore" {
		t.Errorf("got source header %q, want the original headers kept", got)
	}
	// Term is not acknowledged by the server, so its effect shows up shortly after.
	deadline := time.Now().Add(5 * time.Second)
	for {
		info, err := cons.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.NumAckPending == 0 && info.AckFloor.Stream == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("got %d pending acks, ack floor %d; want the message terminated", info.NumAckPending, info.AckFloor.Stream)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestDeadLetterBadComponent(t *testing.T) {
	err := streams.DeadLetter(context.Background(), nil, nil, "a.b", "reason")
	if !errors.Is(err, streams.ErrInvalidName) {
		t.Fatalf("got %v, want ErrInvalidName", err)
	}
}

// Data refused outside a stream (a sampled buffer record) is dead-lettered
// with its reason and subject, once per id within the dedupe window.
func TestRecordDeadLetterData(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for range 2 {
		if err := streams.RecordDeadLetterData(ctx, js, "rspo.r1.swapped", []byte("rec"), "learner", "sample/r1.explore.c0-final.3", "bad action"); err != nil {
			t.Fatal(err)
		}
	}
	if n := streamMsgs(t, js, streams.StreamDLQ); n != 1 {
		t.Fatalf("got %d dead letters, want 1", n)
	}
	dl := lastMessage(t, js, streams.StreamDLQ, "rspo.r1.dlq.learner")
	if got := dl.Header.Get(streams.HeaderDLQReason); got != "bad action" {
		t.Errorf("reason %q", got)
	}
	if got := dl.Header.Get(streams.HeaderDLQSubject); got != "rspo.r1.swapped" {
		t.Errorf("subject %q", got)
	}
	if string(dl.Data) != "rec" {
		t.Errorf("data %q", dl.Data)
	}
	if err := streams.RecordDeadLetterData(ctx, js, "nowhere", nil, "learner", "", "x"); err == nil {
		t.Error("a subject without a run was dead-lettered")
	}
}
