package prmsvc

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// PublishOptions adds context to a prm.published event.
type PublishOptions struct {
	// Cycle is the RSPO cycle the model was refreshed for (0 outside a run).
	Cycle int64
	// Metrics extend (and override) the model's own held-out figures.
	Metrics map[string]float64
}

// Publish stores m's snapshot in the PRM object store under
// streams.PRMObject(run, m.Version) and then announces it with a
// prm.published control event carrying the version, the object key and
// metrics (the model's held-out figures plus o.Metrics). It returns the
// event. The object is stored before the event is published, so a reader of
// the event always finds it. Re-publishing a version replaces the object; the
// event of the same (version, cycle) is deduplicated by the stream.
func Publish(ctx context.Context, js jetstream.JetStream, run string, m *prm.Model, o PublishOptions) (schemas.Event, error) {
	if err := streams.ValidateRun(run); err != nil {
		return schemas.Event{}, err
	}
	b, err := prm.EncodeSnapshot(m)
	if err != nil {
		return schemas.Event{}, err
	}
	object := streams.PRMObject(run, m.Version)
	if err := streams.PutSnapshot(ctx, js, streams.BucketPRM, object, b); err != nil {
		return schemas.Event{}, err
	}
	e := schemas.Event{
		Type: schemas.EventPRMPublished, Run: run, Time: time.Now().UTC(),
		Cycle: o.Cycle, PRMVersion: m.Version, Object: object, Metrics: infoMetrics(m.Info),
	}
	for k, v := range o.Metrics {
		e.Metrics[k] = v
	}
	if _, err := streams.PublishEvent(ctx, js, e); err != nil {
		return schemas.Event{}, err
	}
	return e, nil
}

func infoMetrics(i prm.ModelInfo) map[string]float64 {
	trained := 0.0
	if i.Trained {
		trained = 1
	}
	return map[string]float64{
		"trained": trained, "heldout": float64(i.Heldout), "heldout_successes": float64(i.HeldoutSuccesses),
		"heldout_auc": i.HeldoutAUC, "heldout_spearman": i.HeldoutSpearman, "heldout_mse": i.HeldoutMSE,
	}
}

// Load reads version of run's PRM from the object store. A missing object
// yields an error matching jetstream.ErrObjectNotFound; a bad snapshot one of
// prm.DecodeSnapshot's errors.
func Load(ctx context.Context, js jetstream.JetStream, run string, version int64) (*prm.Model, error) {
	return loadObject(ctx, js, streams.PRMObject(run, version), version)
}

// LoadEvent reads the model a prm.published event announces and checks that
// it is the announced version (else ErrVersionMismatch).
func LoadEvent(ctx context.Context, js jetstream.JetStream, e schemas.Event) (*prm.Model, error) {
	object := e.Object
	if object == "" {
		object = streams.PRMObject(e.Run, e.PRMVersion)
	}
	return loadObject(ctx, js, object, e.PRMVersion)
}

func loadObject(ctx context.Context, js jetstream.JetStream, object string, version int64) (*prm.Model, error) {
	b, err := streams.GetSnapshot(ctx, js, streams.BucketPRM, object)
	if err != nil {
		return nil, err
	}
	m, err := prm.DecodeSnapshot(b)
	if err != nil {
		return nil, fmt.Errorf("prmsvc: %s: %w", object, err)
	}
	if m.Version != version {
		return nil, fmt.Errorf("%w: %s holds version %d, want %d", ErrVersionMismatch, object, m.Version, version)
	}
	return m, nil
}
