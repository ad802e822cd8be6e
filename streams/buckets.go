package streams

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// PolicyObject returns the object name of a run's policy snapshot in
// BucketPolicy. Versions are zero-padded so names sort by version.
func PolicyObject(run string, version int64) string { return snapshotObject(run, version) }

// TrainerStateObject returns the object name of the trainer state stored
// beside a run's policy snapshot of version in BucketPolicy
// (learner.Trainer.MarshalState): PolicyObject with ".trainer" appended.
func TrainerStateObject(run string, version int64) string {
	return PolicyObject(run, version) + ".trainer"
}

// PRMObject returns the object name of a run's PRM snapshot in BucketPRM.
func PRMObject(run string, version int64) string { return snapshotObject(run, version) }

func snapshotObject(run string, version int64) string {
	return fmt.Sprintf("%s/v%012d", run, version)
}

// StateKey returns the key of a component's state in BucketState, e.g.
// StateKey("r1", "learner", "checkpoint") = "r1.learner.checkpoint".
func StateKey(run, component, name string) string {
	return run + "." + component + "." + name
}

// PutSnapshot stores data as object in bucket (BucketPolicy or BucketPRM),
// replacing any earlier object of that name. The bucket must exist (Ensure).
func PutSnapshot(ctx context.Context, js jetstream.JetStream, bucket, object string, data []byte) error {
	obs, err := js.ObjectStore(ctx, bucket)
	if err != nil {
		return fmt.Errorf("streams: open object store %s: %w", bucket, err)
	}
	if _, err := obs.PutBytes(ctx, object, data); err != nil {
		return fmt.Errorf("streams: put %s/%s: %w", bucket, object, err)
	}
	return nil
}

// GetSnapshot reads object from bucket. A missing object yields an error
// matching jetstream.ErrObjectNotFound.
//
// A read that fails its digest check is read again, up to snapshotReadTries
// times in all: in a cluster a read that spans a leader failover can
// receive a chunk twice or out of order, so the object client's digest of
// what arrived differs from the stored one although the stored object is
// intact. A digest that keeps mismatching is returned as an error matching
// jetstream.ErrDigestMismatch.
func GetSnapshot(ctx context.Context, js jetstream.JetStream, bucket, object string) ([]byte, error) {
	obs, err := js.ObjectStore(ctx, bucket)
	if err != nil {
		return nil, fmt.Errorf("streams: open object store %s: %w", bucket, err)
	}
	for try := 1; ; try++ {
		b, err := obs.GetBytes(ctx, object)
		if err == nil {
			return b, nil
		}
		if !errors.Is(err, jetstream.ErrDigestMismatch) || try == snapshotReadTries {
			return nil, fmt.Errorf("streams: get %s/%s: %w", bucket, object, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("streams: get %s/%s: %w (read again after a torn read: %w)", bucket, object, ctx.Err(), err)
		case <-time.After(time.Duration(try) * snapshotReadPause):
		}
	}
}

// snapshotReadTries and snapshotReadPause bound GetSnapshot's reading again
// after a torn read: a failover settles within a second or two, and the
// pauses (1, 2, 3 × snapshotReadPause) add up to 1.5 s.
const (
	snapshotReadTries = 4
	snapshotReadPause = 250 * time.Millisecond
)

// State opens the service-state key-value bucket (BucketState).
func State(ctx context.Context, js jetstream.JetStream) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, BucketState)
	if err != nil {
		return nil, fmt.Errorf("streams: open key-value bucket %s: %w", BucketState, err)
	}
	return kv, nil
}
