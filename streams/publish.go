package streams

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
)

// Publish stores data on subject with the given headers and waits for the
// stream's acknowledgement. A Nats-Msg-Id header makes a retry within the
// dedupe window harmless; the returned PubAck says Duplicate when it was.
// The subject must belong to the topology.
func Publish(ctx context.Context, js jetstream.JetStream, subject string, data []byte, hdr nats.Header) (*jetstream.PubAck, error) {
	if StreamFor(subject) == "" {
		return nil, fmt.Errorf("%w: %q is not captured by any rspo stream", ErrUnknownSubject, subject)
	}
	msg := &nats.Msg{Subject: subject, Data: data, Header: hdr}
	ack, err := js.PublishMsg(ctx, msg)
	if err != nil {
		return nil, fmt.Errorf("streams: publish to %s: %w", subject, err)
	}
	return ack, nil
}

// PublishEvent publishes a control event on rspo.<run>.ctrl.<type>. Its
// message id is derived from the event's fields (EventID), so a service
// that re-announces the same event after a restart stores it once.
func PublishEvent(ctx context.Context, js jetstream.JetStream, e schemas.Event) (*jetstream.PubAck, error) {
	return publishEvent(ctx, js, e, EventID(e))
}

// publishEvent is PublishEvent under message id id.
func publishEvent(ctx context.Context, js jetstream.JetStream, e schemas.Event, id string) (*jetstream.PubAck, error) {
	if err := ValidateRun(e.Run); err != nil {
		return nil, err
	}
	b, err := schemas.EncodeEvent(e)
	if err != nil {
		return nil, fmt.Errorf("streams: encode %s event: %w", e.Type, err)
	}
	h := dataHeaders(id, e.Run, e.Cycle, e.PolicyVersion, "", ContentTypeJSON)
	h.Set(HeaderSchema, itoa(schemas.SchemaVersion))
	return Publish(ctx, js, Subjects(e.Run).Ctrl(e.Type), b, h)
}

// EventID is the deterministic message id of a control event: its run,
// type, cycle, versions and update counter, and for one shard of a sharded
// cycle.explored its shard, so each shard's event is stored once.
func EventID(e schemas.Event) string {
	id := fmt.Sprintf("%s/ctrl/%s/c%d/p%d/m%d/u%d", e.Run, e.Type, e.Cycle, e.PolicyVersion, e.PRMVersion, e.Update)
	if e.Shards > 1 {
		id += fmt.Sprintf("/s%dof%d", e.Shard, e.Shards)
	}
	return id
}

// PublishMetrics publishes a metrics event on rspo.<run>.metrics.<component>.
// An event with an ID carries MetricsID as its message id, so a report
// repeated within the stream's dedupe window (work redone after a restart) is
// stored once; one without is always stored.
func PublishMetrics(ctx context.Context, js jetstream.JetStream, m schemas.MetricsEvent) (*jetstream.PubAck, error) {
	if err := ValidateRun(m.Run); err != nil {
		return nil, err
	}
	if err := ValidateComponent(m.Component); err != nil {
		return nil, err
	}
	b, err := schemas.EncodeMetrics(m)
	if err != nil {
		return nil, fmt.Errorf("streams: encode metrics of %s: %w", m.Component, err)
	}
	h := dataHeaders(MetricsID(m), m.Run, m.Cycle, 0, "", ContentTypeJSON)
	h.Del(HeaderPolicyVersion)
	h.Set(HeaderSchema, itoa(schemas.SchemaVersion))
	return Publish(ctx, js, Subjects(m.Run).Metrics(m.Component), b, h)
}

// MetricsID is the message id of a metrics event with an ID, scoped by its
// run and component (the stream holds every run's metrics); "" without.
func MetricsID(m schemas.MetricsEvent) string {
	if m.ID == "" {
		return ""
	}
	return m.Run + "/metrics/" + m.Component + "/" + m.ID
}

// RolloutID is a rollout request's message id: the request id scoped by the
// run, since the work stream (and its dedupe window) holds every run's requests.
func RolloutID(r schemas.RolloutRequest) string {
	if r.Nonce != "" { // a request asked again under a fresh nonce is a work item of its own
		return r.Run + "/rollout/" + r.ID + "/" + r.Nonce
	}
	return r.Run + "/rollout/" + r.ID
}

// PublishRollout publishes a rollout request on rspo.<run>.work.rollout with
// RolloutID as message id, so publishing it twice queues it once.
func PublishRollout(ctx context.Context, js jetstream.JetStream, r schemas.RolloutRequest) (*jetstream.PubAck, error) {
	if err := ValidateRun(r.Run); err != nil {
		return nil, err
	}
	b, err := schemas.EncodeRolloutRequest(r)
	if err != nil {
		return nil, fmt.Errorf("streams: encode rollout request %s: %w", r.ID, err)
	}
	h := dataHeaders(RolloutID(r), r.Run, r.Cycle, r.PolicyVersion, string(r.Source), ContentTypeJSON)
	h.Set(HeaderSchema, itoa(schemas.SchemaVersion))
	return Publish(ctx, js, Subjects(r.Run).WorkRollout, b, h)
}

// ExploreShardID is an explore shard's message id: its run, cycle, π_θ
// version and index, so a learner that queues a cycle's shards again (after
// a restart) queues each once within the dedupe window.
func ExploreShardID(s schemas.ExploreShard) string {
	return fmt.Sprintf("%s/explore/c%d/p%d/s%dof%d", s.Run, s.Cycle, s.PolicyVersion, s.Shard, s.Shards)
}

// PublishExploreShard queues an explore shard on rspo.<run>.work.explore
// with ExploreShardID as message id.
func PublishExploreShard(ctx context.Context, js jetstream.JetStream, s schemas.ExploreShard) (*jetstream.PubAck, error) {
	if err := ValidateRun(s.Run); err != nil {
		return nil, err
	}
	b, err := schemas.EncodeExploreShard(s)
	if err != nil {
		return nil, fmt.Errorf("streams: encode explore shard %d of cycle %d: %w", s.Shard, s.Cycle, err)
	}
	h := dataHeaders(ExploreShardID(s), s.Run, s.Cycle, s.PolicyVersion, "", ContentTypeJSON)
	h.Set(HeaderSchema, itoa(schemas.SchemaVersion))
	return Publish(ctx, js, Subjects(s.Run).WorkExplore, b, h)
}

// EvalShardID is an evaluation shard's message id: its run, update, π_θ
// version, split and index, so a learner that queues an evaluation again
// (after a restart) queues each shard once within the dedupe window.
func EvalShardID(s schemas.EvalShard) string {
	return fmt.Sprintf("%s/eval/u%d/p%d/%s/s%dof%d", s.Run, s.Update, s.PolicyVersion, s.Split, s.Shard, s.Shards)
}

// PublishEvalShard queues an evaluation shard on rspo.<run>.work.eval
// with EvalShardID as message id.
func PublishEvalShard(ctx context.Context, js jetstream.JetStream, s schemas.EvalShard) (*jetstream.PubAck, error) {
	if err := ValidateRun(s.Run); err != nil {
		return nil, err
	}
	b, err := schemas.EncodeEvalShard(s)
	if err != nil {
		return nil, fmt.Errorf("streams: encode eval shard %d of %s at update %d: %w", s.Shard, s.Split, s.Update, err)
	}
	h := dataHeaders(EvalShardID(s), s.Run, 0, s.PolicyVersion, "", ContentTypeJSON)
	h.Del(HeaderCycle)
	h.Set(HeaderSchema, itoa(schemas.SchemaVersion))
	return Publish(ctx, js, Subjects(s.Run).WorkEval, b, h)
}

// EvalResultID is an evaluation result's message id: that of the shard it
// answers (EvalShardID) under "evalresult", with the shard's nonce, so a
// shard played twice (its actor killed after publishing, before
// acknowledging) stores its result once within the dedupe window, and a
// result published ahead of the actor's under the id it would have
// (which would have the actor's dropped as a duplicate) cannot be made
// without the nonce.
func EvalResultID(r schemas.EvalResult) string {
	id := fmt.Sprintf("%s/evalresult/u%d/p%d/%s/s%dof%d", r.Run, r.Update, r.PolicyVersion, r.Split, r.Shard, r.Shards)
	if r.Nonce != "" {
		id += "/" + r.Nonce
	}
	return id
}

// PublishEvalResult publishes an evaluation result on
// rspo.<run>.eval.<update> with EvalResultID as message id.
func PublishEvalResult(ctx context.Context, js jetstream.JetStream, r schemas.EvalResult) (*jetstream.PubAck, error) {
	if err := ValidateRun(r.Run); err != nil {
		return nil, err
	}
	b, err := schemas.EncodeEvalResult(r)
	if err != nil {
		return nil, fmt.Errorf("streams: encode eval result of shard %d of %s at update %d: %w", r.Shard, r.Split, r.Update, err)
	}
	h := dataHeaders(EvalResultID(r), r.Run, 0, r.PolicyVersion, "", ContentTypeJSON)
	h.Del(HeaderCycle)
	h.Set(HeaderSchema, itoa(schemas.SchemaVersion))
	return Publish(ctx, js, Subjects(r.Run).Eval(r.Update), b, h)
}

// PublishBatch publishes a training batch on rspo.<run>.batch with
// schemas.BatchID (run and update) as message id, so a learner that
// publishes its update's batch again after a restart stores it once. A
// batch larger than the server accepts returns ErrTooLarge.
func PublishBatch(ctx context.Context, js jetstream.JetStream, b *schemas.TrainBatch) (*jetstream.PubAck, error) {
	if err := ValidateRun(b.Run); err != nil {
		return nil, err
	}
	data, err := schemas.EncodeTrainBatch(b)
	if err != nil {
		return nil, fmt.Errorf("streams: encode batch of update %d: %w", b.Update, err)
	}
	if nc := js.Conn(); nc != nil && nc.MaxPayload() > 0 && int64(len(data)) > nc.MaxPayload() {
		return nil, fmt.Errorf("%w: batch of update %d is %d bytes, the server's max_payload %d", ErrTooLarge, b.Update, len(data), nc.MaxPayload())
	}
	h := dataHeaders(b.ID(), b.Run, 0, b.PolicyVersion, "", ContentTypeArrow)
	h.Del(HeaderCycle)
	h.Set(HeaderSchema, itoa(schemas.BatchFormat))
	return Publish(ctx, js, Subjects(b.Run).Batch, data, h)
}
