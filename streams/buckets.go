package streams

import (
	"context"
	"fmt"

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
func GetSnapshot(ctx context.Context, js jetstream.JetStream, bucket, object string) ([]byte, error) {
	obs, err := js.ObjectStore(ctx, bucket)
	if err != nil {
		return nil, fmt.Errorf("streams: open object store %s: %w", bucket, err)
	}
	b, err := obs.GetBytes(ctx, object)
	if err != nil {
		return nil, fmt.Errorf("streams: get %s/%s: %w", bucket, object, err)
	}
	return b, nil
}

// State opens the service-state key-value bucket (BucketState).
func State(ctx context.Context, js jetstream.JetStream) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, BucketState)
	if err != nil {
		return nil, fmt.Errorf("streams: open key-value bucket %s: %w", BucketState, err)
	}
	return kv, nil
}
