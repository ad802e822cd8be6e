package streams

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// RunUsage is what one run holds on a server.
type RunUsage struct {
	// Messages counts the run's messages over every stream of the topology.
	Messages uint64
	// StreamBytes estimates the run's share of the streams' stores: each
	// stream's bytes in proportion to the run's messages in it. JetStream
	// counts a stream's messages per subject but its bytes only in all.
	StreamBytes uint64
	// Objects and ObjectBytes count the run's policy and PRM snapshots
	// (BucketPolicy, BucketPRM).
	Objects     int
	ObjectBytes uint64
}

// Bytes is the run's estimated share of the server's store.
func (u RunUsage) Bytes() uint64 { return u.StreamBytes + u.ObjectBytes }

// Usage returns what every run holds on the server, by run: the runs with
// a message in a stream of the topology or a snapshot in an object store.
func Usage(ctx context.Context, js jetstream.JetStream) (map[string]*RunUsage, error) {
	usage := map[string]*RunUsage{}
	of := func(run string) *RunUsage {
		if usage[run] == nil {
			usage[run] = &RunUsage{}
		}
		return usage[run]
	}
	for _, spec := range Topology() {
		if err := addStreamUsage(ctx, js, spec.Name, of); err != nil {
			return nil, err
		}
	}
	for _, bucket := range []string{BucketPolicy, BucketPRM} {
		objs, err := runObjects(ctx, js, bucket, "")
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			u := of(runOfObject(o.Name))
			u.Objects++
			u.ObjectBytes += o.Size
		}
	}
	return usage, nil
}

// addStreamUsage adds the runs' messages of stream, and their share of its
// bytes, to the usage of(run) returns.
func addStreamUsage(ctx context.Context, js jetstream.JetStream, stream string, of func(string) *RunUsage) error {
	st, err := js.Stream(ctx, stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("streams: stream %s: %w", stream, err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(SubjectPrefix+".>"))
	if err != nil {
		return fmt.Errorf("streams: stream %s: %w", stream, err)
	}
	for subject, n := range info.State.Subjects {
		run := RunOf(subject)
		if run == "" {
			continue
		}
		u := of(run)
		u.Messages += n
		if info.State.Msgs > 0 {
			u.StreamBytes += uint64(float64(info.State.Bytes) * float64(n) / float64(info.State.Msgs))
		}
	}
	return nil
}

// runObjects lists the objects of bucket whose names are a run's
// snapshots (run/v…): run's only, or every run's when run is "". A bucket
// that does not exist holds none.
func runObjects(ctx context.Context, js jetstream.JetStream, bucket, run string) ([]*jetstream.ObjectInfo, error) {
	obs, err := js.ObjectStore(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("streams: object store %s: %w", bucket, err)
	}
	all, err := obs.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("streams: list object store %s: %w", bucket, err)
	}
	var out []*jetstream.ObjectInfo
	for _, o := range all {
		if r := runOfObject(o.Name); r != "" && (run == "" || r == run) {
			out = append(out, o)
		}
	}
	return out, nil
}

// runOfObject is the run a snapshot object's name (run/v…) belongs to,
// "" for a name that is not a run's snapshot.
func runOfObject(name string) string {
	run, _, ok := strings.Cut(name, "/")
	if !ok || ValidateRun(run) != nil {
		return ""
	}
	return run
}

// Removed says what RemoveRun deleted.
type Removed struct {
	// Messages counts the messages purged from the streams.
	Messages uint64
	// Consumers counts the durable consumers of the run's subjects deleted.
	Consumers int
	// Objects counts the policy and PRM snapshots deleted.
	Objects int
	// Keys counts the keys of BucketState purged (run.…).
	Keys int
}

// RemoveRun deletes everything the server holds of run: its messages in
// every stream of the topology (purged by subject), the durable consumers
// that read only its subjects, its policy and PRM snapshots and its keys
// in BucketState. It does not check whether the run is being trained: the
// caller must. What other runs hold is untouched. It returns what it
// deleted before the first error, with that error.
func RemoveRun(ctx context.Context, js jetstream.JetStream, run string) (Removed, error) {
	var rm Removed
	if err := ValidateRun(run); err != nil {
		return rm, err
	}
	for _, spec := range Topology() {
		if err := removeFromStream(ctx, js, spec.Name, run, &rm); err != nil {
			return rm, err
		}
	}
	for _, bucket := range []string{BucketPolicy, BucketPRM} {
		if err := removeObjects(ctx, js, bucket, run, &rm); err != nil {
			return rm, err
		}
	}
	return rm, removeKeys(ctx, js, run, &rm)
}

// removeFromStream deletes run's durable consumers of stream and purges
// run's messages from it.
func removeFromStream(ctx context.Context, js jetstream.JetStream, stream, run string, rm *Removed) error {
	st, err := js.Stream(ctx, stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("streams: stream %s: %w", stream, err)
	}
	consumers := st.ListConsumers(ctx)
	for c := range consumers.Info() {
		if !readsOnlyRun(c.Config, run) {
			continue
		}
		if err := st.DeleteConsumer(ctx, c.Name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
			return fmt.Errorf("streams: delete consumer %s of %s: %w", c.Name, stream, err)
		}
		rm.Consumers++
	}
	if err := consumers.Err(); err != nil {
		return fmt.Errorf("streams: list consumers of %s: %w", stream, err)
	}
	filter := SubjectPrefix + "." + run + ".>"
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		return fmt.Errorf("streams: stream %s: %w", stream, err)
	}
	for _, n := range info.State.Subjects {
		rm.Messages += n
	}
	if err := st.Purge(ctx, jetstream.WithPurgeSubject(filter)); err != nil {
		return fmt.Errorf("streams: purge %s of %s: %w", filter, stream, err)
	}
	return nil
}

// readsOnlyRun reports whether a consumer's filters all lie in run's
// subjects (a consumer without a filter reads every run's).
func readsOnlyRun(c jetstream.ConsumerConfig, run string) bool {
	filters := c.FilterSubjects
	if c.FilterSubject != "" {
		filters = append(filters, c.FilterSubject)
	}
	prefix := SubjectPrefix + "." + run + "."
	for _, f := range filters {
		if !strings.HasPrefix(f, prefix) {
			return false
		}
	}
	return len(filters) > 0
}

// removeObjects deletes run's snapshots in bucket.
func removeObjects(ctx context.Context, js jetstream.JetStream, bucket, run string, rm *Removed) error {
	objs, err := runObjects(ctx, js, bucket, run)
	if err != nil || len(objs) == 0 {
		return err
	}
	obs, err := js.ObjectStore(ctx, bucket)
	if err != nil {
		return fmt.Errorf("streams: object store %s: %w", bucket, err)
	}
	for _, o := range objs {
		if err := obs.Delete(ctx, o.Name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
			return fmt.Errorf("streams: delete %s/%s: %w", bucket, o.Name, err)
		}
		rm.Objects++
	}
	return nil
}

// removeKeys purges run's keys (run.…) from BucketState, history and all.
func removeKeys(ctx context.Context, js jetstream.JetStream, run string, rm *Removed) error {
	kv, err := js.KeyValue(ctx, BucketState)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("streams: key-value bucket %s: %w", BucketState, err)
	}
	keys, err := kv.ListKeysFiltered(ctx, run+".>")
	if err != nil {
		return fmt.Errorf("streams: list keys of %s: %w", BucketState, err)
	}
	for key := range keys.Keys() {
		if err := kv.Purge(ctx, key); err != nil {
			return fmt.Errorf("streams: purge %s/%s: %w", BucketState, key, err)
		}
		rm.Keys++
	}
	return nil
}
