package streams

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// APIRequestTimeout bounds one JetStream API request that a caller makes
// under a longer context (a learner's rollout wait, a service's life).
// A request sent while the server restarts can go unanswered for good:
// the client buffers it while reconnecting and it reaches a server whose
// JetStream is still recovering. Without a bound of its own such a
// request waits out the caller's whole deadline — a learner once sat ten
// minutes creating the consumer of a replay after a bus restart.
var APIRequestTimeout = 5 * time.Second

// APIRetryBudget bounds how long callAPI keeps asking a request that goes
// unanswered: long enough for a restarted server's JetStream to come back,
// short enough that a server without JetStream (every request answered
// "no responders") or one that stopped answering fails the caller with
// the request's error instead of holding it for as long as its context
// lives (a service's whole life).
var APIRetryBudget = 30 * time.Second

// apiRetryPause is the pause between tries of an unanswered request.
const apiRetryPause = 250 * time.Millisecond

// callAPI calls f with a context bounded by APIRequestTimeout, and again
// after a short pause while f's request goes unanswered (the bound ran
// out, or the server had no JetStream responder yet), ctx lives and
// APIRetryBudget has not run out. f must be safe to repeat: a retried
// request that did reach the server the first time must do no harm twice
// (a lookup, or a consumer that its inactivity threshold removes).
func callAPI[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	giveUp := time.Now().Add(APIRetryBudget)
	for {
		actx, cancel := context.WithTimeout(ctx, APIRequestTimeout)
		v, err := f(actx)
		cancel()
		if err == nil || ctx.Err() != nil || !unanswered(err) || time.Now().After(giveUp) {
			return v, err
		}
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(apiRetryPause):
		}
	}
}

// unanswered says whether err means that a request got no answer, as
// opposed to an answer that refused it.
func unanswered(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders)
}

// OrderedConsumer creates an ordered consumer as js.OrderedConsumer does,
// each try bounded by APIRequestTimeout and retried while unanswered
// (callAPI: until ctx ends or APIRetryBudget runs out). Use it for every
// ordered consumer created under a context that lives longer than one
// request.
func OrderedConsumer(ctx context.Context, js jetstream.JetStream, stream string, cfg jetstream.OrderedConsumerConfig) (jetstream.Consumer, error) {
	return callAPI(ctx, func(ctx context.Context) (jetstream.Consumer, error) {
		return js.OrderedConsumer(ctx, stream, cfg)
	})
}
