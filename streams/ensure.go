package streams

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// stateHistory is how many revisions of each service-state key are kept.
const stateHistory = 5

// Ensure creates every stream and bucket of the topology, or updates them
// to match o. It is idempotent: services call it at start. An existing
// stream whose retention differs (which JetStream cannot change in place)
// yields an error naming the stream.
func Ensure(ctx context.Context, js jetstream.JetStream, o Options) error {
	cfgs, err := StreamConfigs(o)
	if err != nil {
		return err
	}
	for _, cfg := range cfgs {
		if _, err := js.CreateOrUpdateStream(ctx, cfg); err != nil {
			return fmt.Errorf("streams: ensure stream %s: %w", cfg.Name, err)
		}
	}
	o = o.withDefaults()
	for _, bucket := range []string{BucketPolicy, BucketPRM} {
		cfg := jetstream.ObjectStoreConfig{
			Bucket:      bucket,
			Description: "rspo snapshots, objects named <run>/v<version>",
			Storage:     o.Storage,
			Replicas:    o.Replicas,
		}
		if _, err := js.CreateOrUpdateObjectStore(ctx, cfg); err != nil {
			return fmt.Errorf("streams: ensure object store %s: %w", bucket, err)
		}
	}
	kv := jetstream.KeyValueConfig{
		Bucket:      BucketState,
		Description: "rspo service state, keys <run>.<component>.<name>",
		History:     stateHistory,
		Storage:     o.Storage,
		Replicas:    o.Replicas,
	}
	if _, err := js.CreateOrUpdateKeyValue(ctx, kv); err != nil {
		return fmt.Errorf("streams: ensure key-value bucket %s: %w", BucketState, err)
	}
	return nil
}
