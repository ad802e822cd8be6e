package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/streams"
)

// activeWindow is how recent a run's activity must be for `rspo runs` to
// call it running: a learner checkpoint written, or a message delivered
// to one of its durable consumers, within it. Every update writes a
// checkpoint and every stage pulls from the bus continuously, so a live
// run shows both within seconds; an update of an LLM policy can take
// minutes, which its consumers' pulls cover. (A variable for the tests,
// whose runs are all seconds old.)
var activeWindow = 2 * time.Minute

// learnerLeaseHeld reports whether run's learner lease is held
// (learnersvc.LeaseKey): its key was written within its TTL (the value's
// ttl_ms; activeWindow for a value that names none). A released lease is
// deleted, and a killed learner's stops being rewritten.
func learnerLeaseHeld(ctx context.Context, kv jetstream.KeyValue, run string, now time.Time) (bool, error) {
	entry, err := kv.Get(ctx, learnersvc.LeaseKey(run))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("lease of %s: %w", run, err)
	}
	ttl := activeWindow
	var h learnersvc.LeaseHolder
	if json.Unmarshal(entry.Value(), &h) == nil && h.TTLMillis > 0 {
		ttl = time.Duration(h.TTLMillis) * time.Millisecond
	}
	return now.Sub(entry.Created()) < ttl, nil
}

// runLiveness says why run looks as if it is being trained, "" when
// nothing does: a held learner lease, a learner checkpoint written within
// activeWindow, or a durable consumer of the run's subjects with a pull
// waiting or a delivery within activeWindow.
func runLiveness(ctx context.Context, js jetstream.JetStream, run string, now time.Time) (string, error) {
	kv, err := js.KeyValue(ctx, streams.BucketState)
	switch {
	case errors.Is(err, jetstream.ErrBucketNotFound):
	case err != nil:
		return "", fmt.Errorf("bucket %s: %w", streams.BucketState, err)
	default:
		if why, err := stateLiveness(ctx, kv, run, now); why != "" || err != nil {
			return why, err
		}
	}
	return consumerLiveness(ctx, js, run, now)
}

// stateLiveness judges run by its lease and its checkpoint's age.
func stateLiveness(ctx context.Context, kv jetstream.KeyValue, run string, now time.Time) (string, error) {
	held, err := learnerLeaseHeld(ctx, kv, run, now)
	if err != nil {
		return "", err
	}
	if held {
		return "its learner holds its lease", nil
	}
	entry, err := kv.Get(ctx, streams.StateKey(run, "learner", "checkpoint"))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("checkpoint of %s: %w", run, err)
	}
	if age := now.Sub(entry.Created()); age < activeWindow {
		return fmt.Sprintf("its learner wrote a checkpoint %s ago", age.Round(time.Second)), nil
	}
	return "", nil
}

// consumerLiveness judges run by its durable consumers' activity.
func consumerLiveness(ctx context.Context, js jetstream.JetStream, run string, now time.Time) (string, error) {
	prefix := streams.SubjectPrefix + "." + run + "."
	for _, spec := range streams.Topology() {
		st, err := js.Stream(ctx, spec.Name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("stream %s: %w", spec.Name, err)
		}
		consumers := st.ListConsumers(ctx)
		for c := range consumers.Info() {
			if c.Config.Durable == "" || !strings.HasPrefix(c.Config.FilterSubject, prefix) {
				continue
			}
			if c.NumWaiting > 0 {
				return fmt.Sprintf("consumer %s is pulling", c.Name), nil
			}
			if last := c.Delivered.Last; last != nil && now.Sub(*last) < activeWindow {
				return fmt.Sprintf("consumer %s received a message %s ago", c.Name, now.Sub(*last).Round(time.Second)), nil
			}
		}
		if err := consumers.Err(); err != nil {
			return "", fmt.Errorf("consumers of %s: %w", spec.Name, err)
		}
	}
	return "", nil
}
