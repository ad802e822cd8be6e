package streams

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/nats-io/nats.go/jetstream"
)

// BatchHandler processes the messages of one fetch together, e.g. to store
// them in one transaction. It returns nil when every message succeeded, or
// one result per message, in order, each with Handler's meaning: nil acks,
// a RejectError dead-letters, any other error schedules a redelivery.
type BatchHandler func(ctx context.Context, msgs []jetstream.Msg) []error

// ConsumeBatch is Consume for a BatchHandler: each fetch of up to cfg.Batch
// messages is handed to h at once and settled after h returns. Acks are
// sent without waiting for the server's confirmation, so a batch costs one
// round trip rather than one per message; a lost ack only causes a
// redelivery, which handlers must tolerate anyway. Messages delivered more
// than cfg.MaxDeliver times are dead-lettered before h sees them. Errors and
// shutdown are as for Consume.
func ConsumeBatch(ctx context.Context, js jetstream.JetStream, cfg ConsumerConfig, h BatchHandler) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	w := &batchWorker{worker: worker{js: js, cfg: cfg.withDefaults()}, h: h}
	return w.run(ctx, w.pull)
}

// batchWorker handles the batches of one ConsumeBatch call.
type batchWorker struct {
	worker
	h BatchHandler
}

// pull waits up to MaxWait for one message, tops the batch up with what
// is available right now, and hands the batch to the handler. Waiting for
// a full batch instead would delay a trickle of messages by MaxWait each.
func (w *batchWorker) pull(ctx, hctx context.Context, cons jetstream.Consumer) error {
	first, err := w.fetch(cons, 1)
	if err != nil {
		return w.fetchFailed(ctx, err)
	}
	msgs := collect(nil, first)
	err = first.Error()
	if len(msgs) == 1 && w.cfg.Batch > 1 && err == nil {
		var rest jetstream.MessageBatch
		if rest, err = cons.FetchNoWait(w.cfg.Batch - 1); err == nil {
			msgs = collect(msgs, rest)
			err = rest.Error()
		}
	}
	w.handle(hctx, msgs)
	return w.fetchFailed(ctx, err)
}

// collect appends every message of batch to msgs.
func collect(msgs []jetstream.Msg, batch jetstream.MessageBatch) []jetstream.Msg {
	for msg := range batch.Messages() {
		msgs = append(msgs, msg)
	}
	return msgs
}

// handle dead-letters over-delivered messages, runs the handler on the rest
// and settles each by its result.
func (w *batchWorker) handle(ctx context.Context, fetched []jetstream.Msg) {
	if len(fetched) == 0 {
		return
	}
	msgs := fetched[:0:0]
	delivered := make([]uint64, 0, len(fetched))
	for _, msg := range fetched {
		n := uint64(1)
		if md, err := msg.Metadata(); err == nil {
			n = md.NumDelivered
		}
		if ctx.Err() == nil && n > uint64(w.cfg.MaxDeliver) {
			w.deadLetter(ctx, w.log(msg), msg, fmt.Sprintf("delivered %d times without being acknowledged", n))
			continue
		}
		msgs, delivered = append(msgs, msg), append(delivered, n)
	}
	if len(msgs) == 0 {
		return
	}
	if ctx.Err() != nil { // drain timed out: give the messages back now
		for _, msg := range msgs {
			w.giveBack(w.log(msg), msg)
		}
		return
	}
	results := w.call(ctx, msgs)
	for i, msg := range msgs {
		w.settleResult(ctx, msg, delivered[i], results[i])
	}
}

// call runs the handler and returns one result per message; a panic or a
// result list of the wrong length fails every message (they are retried).
func (w *batchWorker) call(ctx context.Context, msgs []jetstream.Msg) (results []error) {
	fail := func(err error) []error {
		out := make([]error, len(msgs))
		for i := range out {
			out[i] = err
		}
		return out
	}
	defer func() {
		if r := recover(); r != nil {
			results = fail(fmt.Errorf("streams: batch handler panicked: %v", r))
		}
	}()
	results = w.h(ctx, msgs)
	switch {
	case results == nil:
		return make([]error, len(msgs))
	case len(results) != len(msgs):
		return fail(fmt.Errorf("streams: batch handler returned %d results for %d messages", len(results), len(msgs)))
	}
	return results
}

// settleResult acks, dead-letters or naks msg after the handler's verdict.
func (w *batchWorker) settleResult(ctx context.Context, msg jetstream.Msg, delivered uint64, err error) {
	log := w.log(msg)
	var rej *RejectError
	switch {
	case err == nil:
		w.settle(log, "ack", msg.Ack())
		w.cfg.Counters.Handled()
	case ctx.Err() != nil:
		w.giveBack(log, msg)
	case errors.As(err, &rej):
		w.deadLetter(ctx, log, msg, rej.Reason)
	case delivered >= uint64(w.cfg.MaxDeliver):
		w.deadLetter(ctx, log, msg, fmt.Sprintf("failed %d deliveries, last error: %v", delivered, err))
	default:
		w.retry(log, msg, delivered, err)
	}
}

func (w *batchWorker) log(msg jetstream.Msg) *slog.Logger {
	return w.cfg.Logger.With("consumer", w.cfg.Durable, "subject", msg.Subject())
}
