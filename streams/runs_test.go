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

// fillRun gives run three trajectories, a control event, a policy
// snapshot, a state key and a durable consumer of its swapped subject.
func fillRun(t *testing.T, js jetstream.JetStream, run string) {
	t.Helper()
	ctx := context.Background()
	for i := range 3 {
		if _, err := streams.PublishTrajectory(ctx, js, streamstest.Trajectory(run, schemas.SourceOnPolicy, uint64(i))); err != nil {
			t.Fatal(err)
		}
	}
	e := schemas.Event{Type: schemas.EventCycleStarted, Run: run, Cycle: 0, Time: time.Unix(1700000000, 0).UTC()}
	if _, err := streams.PublishEvent(ctx, js, e); err != nil {
		t.Fatal(err)
	}
	if err := streams.PutSnapshot(ctx, js, streams.BucketPolicy, streams.PolicyObject(run, 1), make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	kv, err := streams.State(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, streams.StateKey(run, "learner", "checkpoint"), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	_, err = js.CreateOrUpdateConsumer(ctx, streams.StreamSwapped, jetstream.ConsumerConfig{
		Durable: "buffer-" + run, FilterSubject: streams.Subjects(run).Swapped, AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
}

// RemoveRun deletes a run's messages, consumers, snapshots and state, and
// nothing of another run whose name it prefixes.
func TestRemoveRunLeavesOtherRuns(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	fillRun(t, js, "r1")
	fillRun(t, js, "r10")

	before, err := streams.Usage(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	if u := before["r1"]; u == nil || u.Messages != 4 || u.Objects != 1 || u.ObjectBytes != 1000 || u.StreamBytes == 0 {
		t.Fatalf("usage of r1 %+v, want 4 messages and one snapshot of 1000 bytes", u)
	}
	rm, err := streams.RemoveRun(ctx, js, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if rm != (streams.Removed{Messages: 4, Consumers: 1, Objects: 1, Keys: 1}) {
		t.Errorf("removed %+v, want 4 messages, 1 consumer, 1 object, 1 key", rm)
	}
	after, err := streams.Usage(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	if u := after["r1"]; u != nil {
		t.Errorf("r1 still holds %+v", u)
	}
	if a, b := after["r10"], before["r10"]; a == nil || a.Messages != b.Messages || a.Objects != b.Objects || a.ObjectBytes != b.ObjectBytes {
		t.Errorf("r10 holds %+v after removing r1, %+v before", after["r10"], before["r10"])
	}
	if _, err := js.Consumer(ctx, streams.StreamSwapped, "buffer-r1"); !errors.Is(err, jetstream.ErrConsumerNotFound) {
		t.Errorf("consumer buffer-r1: %v, want not found", err)
	}
	if _, err := js.Consumer(ctx, streams.StreamSwapped, "buffer-r10"); err != nil {
		t.Errorf("consumer buffer-r10: %v", err)
	}
	kv, err := streams.State(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(ctx, "r1.learner.checkpoint"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Errorf("r1's checkpoint: %v, want not found", err)
	}
	if _, err := kv.Get(ctx, "r10.learner.checkpoint"); err != nil {
		t.Errorf("r10's checkpoint: %v", err)
	}
}

func TestRemoveRunRejectsABadName(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	if _, err := streams.RemoveRun(context.Background(), js, "a.>"); !errors.Is(err, streams.ErrInvalidName) {
		t.Errorf("got %v, want ErrInvalidName", err)
	}
}
