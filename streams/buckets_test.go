package streams_test

import (
	"context"
	"errors"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// tornReads wraps a JetStream context so that the first torn reads of any
// object fail their digest check, as a read spanning a cluster leader's
// failover does.
type tornReads struct {
	jetstream.JetStream
	torn  int // reads still to tear
	reads int // GetBytes calls seen
}

func (j *tornReads) ObjectStore(ctx context.Context, bucket string) (jetstream.ObjectStore, error) {
	obs, err := j.JetStream.ObjectStore(ctx, bucket)
	if err != nil {
		return nil, err
	}
	return tornStore{ObjectStore: obs, js: j}, nil
}

type tornStore struct {
	jetstream.ObjectStore
	js *tornReads
}

func (s tornStore) GetBytes(ctx context.Context, name string, opts ...jetstream.GetObjectOpt) ([]byte, error) {
	s.js.reads++
	if s.js.torn > 0 {
		s.js.torn--
		return nil, jetstream.ErrDigestMismatch
	}
	return s.ObjectStore.GetBytes(ctx, name, opts...)
}

// TestGetSnapshotReadsAgainAfterATornRead is the regression test of a
// chaos run that lost its final policy: exporting it during a leader
// failover got "digests do not match" for an intact object.
func TestGetSnapshotReadsAgainAfterATornRead(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	name := streams.PolicyObject("r1", 4)
	if err := streams.PutSnapshot(ctx, js, streams.BucketPolicy, name, []byte("weights")); err != nil {
		t.Fatal(err)
	}

	flaky := &tornReads{JetStream: js, torn: 2}
	got, err := streams.GetSnapshot(ctx, flaky, streams.BucketPolicy, name)
	if err != nil || string(got) != "weights" {
		t.Fatalf("after two torn reads: got %q, %v; want the object", got, err)
	}
	if flaky.reads != 3 {
		t.Fatalf("read %d times, want 3", flaky.reads)
	}

	broken := &tornReads{JetStream: js, torn: 1 << 30}
	if _, err := streams.GetSnapshot(ctx, broken, streams.BucketPolicy, name); !errors.Is(err, jetstream.ErrDigestMismatch) {
		t.Fatalf("digest that never matches: got %v, want ErrDigestMismatch", err)
	}
	if broken.reads < 2 || broken.reads > 10 {
		t.Fatalf("a digest that never matches was read %d times, want a few", broken.reads)
	}

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	gone := &tornReads{JetStream: js, torn: 1 << 30}
	if _, err := streams.GetSnapshot(canceled, gone, streams.BucketPolicy, name); err == nil || gone.reads > 1 {
		t.Fatalf("canceled context: got %v after %d reads, want an error after one", err, gone.reads)
	}
}
