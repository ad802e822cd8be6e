package streams

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
)

// Payload describes one kind of message body: how to decode (and so
// validate) it and which run it claims to belong to. Typed and TypedBatch
// use it so that every consumer decodes, checks the run and dead-letters
// what fails in one place.
type Payload[T any] struct {
	// Name names the kind in dead-letter reasons ("trajectory").
	Name string
	// Decode decodes and validates a message body.
	Decode func([]byte) (T, error)
	// Run returns the run a decoded value claims.
	Run func(T) string
}

// The payloads rspo's consumers read.
var (
	// Trajectories are trajectory and buffer-record messages (Arrow IPC).
	Trajectories = Payload[*schemas.Trajectory]{Name: "trajectory", Decode: schemas.DecodeTrajectory,
		Run: func(t *schemas.Trajectory) string { return t.Run }}
	// Events are control events (JSON).
	Events = Payload[schemas.Event]{Name: "event", Decode: schemas.DecodeEvent,
		Run: func(e schemas.Event) string { return e.Run }}
	// RolloutRequests are the learner's work requests (JSON).
	RolloutRequests = Payload[schemas.RolloutRequest]{Name: "rollout request", Decode: schemas.DecodeRolloutRequest,
		Run: func(r schemas.RolloutRequest) string { return r.Run }}
	// ExploreShards are the shards of the learner's cycles (JSON).
	ExploreShards = Payload[schemas.ExploreShard]{Name: "explore shard", Decode: schemas.DecodeExploreShard,
		Run: func(s schemas.ExploreShard) string { return s.Run }}
	// EvalShards are the shards of the learner's evaluations (JSON).
	EvalShards = Payload[schemas.EvalShard]{Name: "eval shard", Decode: schemas.DecodeEvalShard,
		Run: func(s schemas.EvalShard) string { return s.Run }}
	// EvalResults are the actors' answers to evaluation shards (JSON).
	EvalResults = Payload[schemas.EvalResult]{Name: "eval result", Decode: schemas.DecodeEvalResult,
		Run: func(r schemas.EvalResult) string { return r.Run }}
	// TrainBatches are the learner's training batches (Arrow IPC).
	TrainBatches = Payload[*schemas.TrainBatch]{Name: "training batch", Decode: schemas.DecodeTrainBatch,
		Run: func(b *schemas.TrainBatch) string { return b.Run }}
)

// Delivery is a decoded message of the consumer's run, with the raw
// message for its headers, metadata and heartbeats (Msg.InProgress).
type Delivery[T any] struct {
	Value T
	Msg   jetstream.Msg
}

// TypedHandler handles one decoded message of the consumer's run. Its
// result is the message's fate, as for Handler: nil accepts (acks), a
// RejectError (Reject, Rejectf) dead-letters it with the reason, any other
// error retries it after a delay.
type TypedHandler[T any] func(ctx context.Context, d Delivery[T]) error

// TypedBatchHandler handles the decoded messages of one fetch together and
// returns nil (all accepted) or one result per delivery, in order, each
// with TypedHandler's meaning.
type TypedBatchHandler[T any] func(ctx context.Context, ds []Delivery[T]) []error

// Typed returns a Handler that decodes every message as p, dead-letters
// one that does not decode or that claims another run than run (naming
// why), and hands the rest to h.
func Typed[T any](p Payload[T], run string, h TypedHandler[T]) Handler {
	return func(ctx context.Context, msg jetstream.Msg) error {
		d, err := decodeDelivery(p, run, msg)
		if err != nil {
			return err
		}
		return h(ctx, d)
	}
}

// TypedBatch is Typed for ConsumeBatch: messages that fail to decode or
// belong to another run are dead-lettered, h gets the rest of the fetch
// (and is not called when none is left).
func TypedBatch[T any](p Payload[T], run string, h TypedBatchHandler[T]) BatchHandler {
	return func(ctx context.Context, msgs []jetstream.Msg) []error {
		results := make([]error, len(msgs))
		ds := make([]Delivery[T], 0, len(msgs))
		index := make([]int, 0, len(msgs))
		for i, msg := range msgs {
			d, err := decodeDelivery(p, run, msg)
			if err != nil {
				results[i] = err
				continue
			}
			ds, index = append(ds, d), append(index, i)
		}
		if len(ds) == 0 {
			return results
		}
		out := h(ctx, ds)
		if out != nil && len(out) != len(ds) {
			err := fmt.Errorf("streams: typed batch handler returned %d results for %d messages", len(out), len(ds))
			for _, i := range index {
				results[i] = err
			}
			return results
		}
		for k, i := range index {
			if out != nil {
				results[i] = out[k]
			}
		}
		return results
	}
}

// decodeDelivery decodes msg as p and checks its run; every error is a
// RejectError, since no retry can fix the message.
func decodeDelivery[T any](p Payload[T], run string, msg jetstream.Msg) (Delivery[T], error) {
	v, err := p.Decode(msg.Data())
	if err != nil {
		return Delivery[T]{}, Rejectf("not a valid %s: %v", p.Name, err)
	}
	if got := p.Run(v); got != run {
		return Delivery[T]{}, Rejectf("%s belongs to run %q, not %q", p.Name, got, run)
	}
	return Delivery[T]{Value: v, Msg: msg}, nil
}
