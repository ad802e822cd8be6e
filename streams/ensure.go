package streams

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/nats-io/nats.go/jetstream"
)

// stateHistory is how many revisions of each service-state key are kept.
const stateHistory = 5

// ErrTopologyConflict means an existing stream cannot be made to fit the
// protocol in place (its retention differs).
var ErrTopologyConflict = errors.New("streams: existing stream conflicts with the rspo topology")

// Ensure creates every stream and bucket of the topology that is missing,
// and brings existing ones in line with the protocol (subjects) and with
// the options set in o. Zero-valued options leave an existing stream's
// settings alone, so services can call Ensure(ctx, js, Options{}) at start
// without undoing the limits an operator chose (e.g. with `rspo serve nats
// --max-age`); missing streams get the documented defaults. It is
// idempotent and safe to call concurrently.
//
// An existing stream or bucket with another replica count is scaled to
// o.Replicas when that is set (JetStream moves the data itself).
//
// It returns ErrInvalidConfig for bad options, ErrTopologyConflict for a
// stream whose retention policy differs from the protocol's and ErrReplicas
// when o.Replicas exceeds the JetStream servers online.
func Ensure(ctx context.Context, js jetstream.JetStream, o Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	err := ensure(ctx, js, o)
	for try := 1; try < ensureTries && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil; try++ {
		err = ensure(ctx, js, o)
	}
	if o.Replicas > 1 {
		err = replicasError(err, o.Replicas)
	}
	return err
}

// ensureTries is how often Ensure tries when a JetStream request times
// out: on a cluster, services starting together create the same replicated
// buckets at once, and the server may leave all but one request unanswered.
const ensureTries = 3

func ensure(ctx context.Context, js jetstream.JetStream, o Options) error {
	for _, spec := range Topology() {
		if err := ensureStream(ctx, js, spec, o); err != nil {
			return err
		}
	}
	for _, b := range []string{BucketPolicy, BucketPRM} {
		if err := ensureObjectStore(ctx, js, b, o); err != nil {
			return err
		}
	}
	return ensureState(ctx, js, o)
}

func ensureStream(ctx context.Context, js jetstream.JetStream, spec StreamSpec, o Options) error {
	st, err := js.Stream(ctx, spec.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		_, err = js.CreateStream(ctx, spec.config(o.withDefaults()))
		if !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) { // else created meanwhile: update it
			return wrapEnsure("stream", spec.Name, err)
		}
		st, err = js.Stream(ctx, spec.Name)
	}
	if err != nil {
		return wrapEnsure("stream", spec.Name, err)
	}
	cur := st.CachedInfo().Config
	next, err := spec.merge(cur, o)
	if err != nil || reflect.DeepEqual(next, cur) {
		return err
	}
	_, err = js.UpdateStream(ctx, next)
	return wrapEnsure("stream", spec.Name, err)
}

// merge returns cur with the protocol's subjects and the options set in o.
func (s StreamSpec) merge(cur jetstream.StreamConfig, o Options) (jetstream.StreamConfig, error) {
	if cur.Retention != s.Retention {
		return cur, fmt.Errorf("%w: %s has retention %v, the protocol needs %v; delete the stream or use another server",
			ErrTopologyConflict, s.Name, cur.Retention, s.Retention)
	}
	next := cur
	next.Subjects = s.Subjects
	next.Description = s.Description
	if a := s.maxAge(o); a != 0 {
		next.MaxAge = a
	}
	if o.MaxBytes != 0 {
		next.MaxBytes = o.MaxBytes
	}
	if s.MaxMsgsPerSubject > 0 {
		next.MaxMsgsPerSubject = s.MaxMsgsPerSubject
	}
	if o.Replicas != 0 {
		next.Replicas = o.Replicas
	}
	if s.Dedupe && o.DuplicateWindow != 0 {
		next.Duplicates = o.DuplicateWindow
	}
	return next, nil
}

// rescale reports whether the backing stream of an existing bucket must be
// updated to replicas (0 keeps it; an unreadable stream is updated).
func rescale(ctx context.Context, js jetstream.JetStream, stream string, replicas int) bool {
	if replicas == 0 {
		return false
	}
	st, err := js.Stream(ctx, stream)
	return err != nil || st.CachedInfo().Config.Replicas != replicas
}

// ensureObjectStore creates bucket if missing; an existing one is only
// updated when o sets another replica count.
func ensureObjectStore(ctx context.Context, js jetstream.JetStream, bucket string, o Options) error {
	_, err := js.ObjectStore(ctx, bucket)
	if err == nil && !rescale(ctx, js, "OBJ_"+bucket, o.Replicas) {
		return nil
	}
	if err != nil && !errors.Is(err, jetstream.ErrBucketNotFound) {
		return wrapEnsure("object store", bucket, err)
	}
	d := o.withDefaults()
	_, err = js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket:      bucket,
		Description: "rspo snapshots, objects named <run>/v<version>",
		Storage:     d.Storage,
		Replicas:    d.Replicas,
	})
	return wrapEnsure("object store", bucket, err)
}

// ensureState creates the state bucket if missing; an existing one is only
// updated when o sets another replica count.
func ensureState(ctx context.Context, js jetstream.JetStream, o Options) error {
	_, err := js.KeyValue(ctx, BucketState)
	if err == nil && !rescale(ctx, js, "KV_"+BucketState, o.Replicas) {
		return nil
	}
	if err != nil && !errors.Is(err, jetstream.ErrBucketNotFound) {
		return wrapEnsure("key-value bucket", BucketState, err)
	}
	d := o.withDefaults()
	_, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      BucketState,
		Description: "rspo service state, keys <run>.<component>.<name>",
		History:     stateHistory,
		Storage:     d.Storage,
		Replicas:    d.Replicas,
	})
	return wrapEnsure("key-value bucket", BucketState, err)
}

func wrapEnsure(kind, name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("streams: ensure %s %s: %w", kind, name, err)
}
