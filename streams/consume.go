package streams

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Handler processes one message. Its result decides the message's fate:
// nil acknowledges it (after the server confirms the ack), a RejectError
// (see Reject) sends it to the dead-letter queue and terminates it, any
// other error schedules a redelivery after a delay. Handlers must be
// idempotent: a crash after the handler's output is stored but before the
// ack redelivers the message. A handler that may run longer than AckWait
// calls msg.InProgress() now and then, or the server redelivers the
// message to another instance.
type Handler func(ctx context.Context, msg jetstream.Msg) error

// ConsumerConfig configures Consume. Stream and Durable are required.
type ConsumerConfig struct {
	// Stream is the stream to consume, e.g. StreamTraj.
	Stream string
	// Durable names the consumer; instances with the same name share the
	// work. It must be a valid JetStream consumer name.
	Durable string
	// FilterSubject narrows the stream, e.g. Subjects(run).TrajExplore.
	// Default: the whole stream.
	FilterSubject string
	// Component names the consumer in dead-letter subjects
	// (rspo.<run>.dlq.<component>). Default: Durable.
	Component string
	// Batch is how many messages one pull fetches. Default 16.
	Batch int
	// MaxWait bounds one pull when the stream is idle. Default 1s.
	MaxWait time.Duration
	// AckWait is how long the server waits for an ack before redelivering.
	// Default 30s.
	AckWait time.Duration
	// MaxDeliver is how many deliveries a failing message gets before it is
	// dead-lettered. Default 5.
	MaxDeliver int
	// RetryDelay is the delay before the first redelivery after a handler
	// error; it grows linearly with the delivery count. Default 1s.
	RetryDelay time.Duration
	// DrainTimeout bounds how long in-flight messages may still be handled
	// after ctx ends; the handler's context is cancelled then and the rest
	// are returned to the stream. Default 30s.
	DrainTimeout time.Duration
	// GiveBack, when set, ends the handler's context as soon as ctx ends
	// and returns the message in hand to the stream at once, instead of
	// letting the handler finish it within DrainTimeout: for work that
	// another instance redoes exactly and that can take minutes (an
	// explorer's shard), so that a stop is not held up by it.
	GiveBack bool
	// Logger reports failed acks and transient fetch errors, and every
	// dead-lettered message with its reason. Default slog.Default().
	Logger *slog.Logger
	// OnDeadLetter, if set, is called for every message the consumer
	// dead-letters — undecodable, of another run, rejected by the handler
	// or out of deliveries — e.g. to count them.
	OnDeadLetter func(msg jetstream.Msg, reason string)
	// Counters, if set, is told the fate of every message the consumer
	// settles (e.g. to export it as metrics).
	Counters Counters
}

// Counters counts what a consumer does with its messages. Its methods are
// called from the consumer's goroutine, so an implementation shared by
// several consumers must be safe for concurrent use.
type Counters interface {
	// Handled counts a message the handler processed and that was acked.
	Handled()
	// Retried counts a message given back for redelivery after the
	// handler failed.
	Retried()
	// DeadLettered counts a message sent to the dead-letter queue.
	DeadLettered()
}

// noCounters counts nothing: the default Counters.
type noCounters struct{}

func (noCounters) Handled()      {}
func (noCounters) Retried()      {}
func (noCounters) DeadLettered() {}

// Validate reports every problem with the configuration, joined.
func (c ConsumerConfig) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...)))
	}
	if c.Stream == "" {
		bad("consumer needs a stream")
	}
	if c.Durable == "" {
		bad("consumer needs a durable name")
	}
	comp := c.Component
	if comp == "" {
		comp = c.Durable
	}
	if err := ValidateComponent(comp); c.Durable != "" && err != nil {
		bad("dead-letter component: %v", err)
	}
	if c.Batch < 0 || c.MaxDeliver < 0 {
		bad("batch %d and max deliver %d must not be negative", c.Batch, c.MaxDeliver)
	}
	if c.MaxWait < 0 || c.AckWait < 0 || c.RetryDelay < 0 || c.DrainTimeout < 0 {
		bad("durations must not be negative")
	}
	return errors.Join(errs...)
}

func (c ConsumerConfig) withDefaults() ConsumerConfig {
	if c.Component == "" {
		c.Component = c.Durable
	}
	c.Batch = cmp.Or(c.Batch, 16)
	c.MaxDeliver = cmp.Or(c.MaxDeliver, 5)
	c.MaxWait = cmp.Or(c.MaxWait, time.Second)
	c.AckWait = cmp.Or(c.AckWait, 30*time.Second)
	c.RetryDelay = cmp.Or(c.RetryDelay, time.Second)
	c.DrainTimeout = cmp.Or(c.DrainTimeout, 30*time.Second)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Counters == nil {
		c.Counters = noCounters{}
	}
	return c
}

func (c ConsumerConfig) jetstreamConfig() jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:       c.Durable,
		FilterSubject: c.FilterSubject,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       c.AckWait,
		// Redeliveries are bounded by Consume, which dead-letters instead
		// of letting the server drop the message silently.
		MaxDeliver:    -1,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	}
}

// Consume creates (or reuses) the durable pull consumer described by cfg
// and feeds its messages to h, one at a time, until ctx ends. Then it stops
// fetching, lets the handler finish the messages already fetched (for at
// most DrainTimeout) and returns nil. Run several Consume calls with the
// same Durable, in one process or many, to share the work.
//
// It returns early with an error if the consumer cannot be created, is
// deleted, or the connection is closed; ErrInvalidConfig for a bad cfg.
func Consume(ctx context.Context, js jetstream.JetStream, cfg ConsumerConfig, h Handler) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	w := &worker{js: js, cfg: cfg.withDefaults(), one: h}
	return w.run(ctx, w.pull)
}

// worker holds what the fetch loop and the settling of messages share.
type worker struct {
	js  jetstream.JetStream
	cfg ConsumerConfig // with defaults
	one Handler        // per-message handler; nil for ConsumeBatch
}

// stepFunc fetches and handles one batch. hctx stays live until the drain
// deadline after ctx ends. It returns an error only when consuming cannot
// continue.
type stepFunc func(ctx, hctx context.Context, cons jetstream.Consumer) error

// run creates the consumer and repeats step until ctx ends.
func (w *worker) run(ctx context.Context, step stepFunc) error {
	cons, err := w.js.CreateOrUpdateConsumer(ctx, w.cfg.Stream, w.cfg.jetstreamConfig())
	if err != nil && ctx.Err() != nil {
		return nil // stopped while starting: a clean stop, as after any fetch
	}
	if err != nil {
		return fmt.Errorf("streams: consumer %s on %s: %w", w.cfg.Durable, w.cfg.Stream, err)
	}
	hctx, cancel := w.handlerContext(ctx)
	defer cancel()
	for ctx.Err() == nil {
		if err := step(ctx, hctx, cons); err != nil {
			return err
		}
	}
	return nil
}

// handlerContext is the context handlers run under: ctx itself with
// GiveBack (a child, cancelled in the same call as ctx, so no episode or
// step starts after the stop), otherwise one that outlives ctx by
// DrainTimeout.
func (w *worker) handlerContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if w.cfg.GiveBack {
		return context.WithCancel(ctx)
	}
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(w.cfg.DrainTimeout, cancel) })
	return hctx, func() { stop(); cancel() }
}

// pull fetches up to Batch messages and handles each as it arrives.
func (w *worker) pull(ctx, hctx context.Context, cons jetstream.Consumer) error {
	batch, err := w.fetch(cons, w.cfg.Batch)
	if err == nil {
		for msg := range batch.Messages() {
			w.handle(hctx, msg)
		}
		err = batch.Error()
	}
	return w.fetchFailed(ctx, err)
}

// fetch pulls up to n messages, waiting at most MaxWait for the first.
//
// FetchMaxWait, not a context deadline: the pull then ends with the
// server's expiry notice after every message it sent. A client-side
// deadline (FetchContext) stops reading up to 10% before the server's
// expiry and drops the messages still in flight, which then wait AckWait
// for redelivery. The price is that a shutdown waits for the pull to
// expire, at most MaxWait.
func (w *worker) fetch(cons jetstream.Consumer, n int) (jetstream.MessageBatch, error) {
	return cons.Fetch(n, jetstream.FetchMaxWait(w.cfg.MaxWait))
}

// fetchFailed classifies a fetch error: nil to go on (after a pause for a
// transient error), or the error that ends consuming.
func (w *worker) fetchFailed(ctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) {
		return nil
	}
	if errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, jetstream.ErrConsumerDeleted) ||
		errors.Is(err, jetstream.ErrConsumerNotFound) {
		return fmt.Errorf("streams: consumer %s on %s: %w", w.cfg.Durable, w.cfg.Stream, err)
	}
	w.cfg.Logger.Warn("streams: fetch failed, retrying", "consumer", w.cfg.Durable, "err", err)
	sleep(ctx, w.cfg.MaxWait)
	return nil
}

// handle runs the handler on msg and settles it: ack, dead-letter or nak.
func (w *worker) handle(ctx context.Context, msg jetstream.Msg) {
	log := w.cfg.Logger.With("consumer", w.cfg.Durable, "subject", msg.Subject())
	if ctx.Err() != nil { // drain timed out: give the message back now
		w.giveBack(log, msg)
		return
	}
	var delivered uint64 = 1
	if md, err := msg.Metadata(); err == nil {
		delivered = md.NumDelivered
	}
	if delivered > uint64(w.cfg.MaxDeliver) {
		reason := fmt.Sprintf("delivered %d times without being acknowledged", delivered)
		w.deadLetter(ctx, log, msg, reason)
		return
	}
	err := w.call(ctx, msg)
	var rej *RejectError
	switch {
	case err == nil:
		w.settle(log, "ack", msg.DoubleAck(ctx))
		w.cfg.Counters.Handled()
	case errors.As(err, &rej):
		w.deadLetter(ctx, log, msg, rej.Reason)
	case ctx.Err() != nil:
		w.giveBack(log, msg)
	case delivered >= uint64(w.cfg.MaxDeliver):
		w.deadLetter(ctx, log, msg, fmt.Sprintf("failed %d deliveries, last error: %v", delivered, err))
	default:
		w.retry(log, msg, delivered, err)
	}
}

// giveBack returns msg to the stream unhandled as the consumer stops. The
// redelivery waits out MaxWait, the longest the pull in hand stays open: a
// plain nak was redelivered into that dying pull at once, handed back
// again and again until it expired, each time counted as a delivery, and
// the last one then waited out the whole ack wait.
func (w *worker) giveBack(log *slog.Logger, msg jetstream.Msg) {
	w.settle(log, "nak", msg.NakWithDelay(w.cfg.MaxWait))
}

// retry gives msg back for redelivery after a delay growing with its
// delivery count, counting the retry.
func (w *worker) retry(log *slog.Logger, msg jetstream.Msg, delivered uint64, err error) {
	log.Debug("streams: handler failed, will retry", "delivered", delivered, "err", err)
	w.settle(log, "nak", msg.NakWithDelay(time.Duration(delivered)*w.cfg.RetryDelay))
	w.cfg.Counters.Retried()
}

// call runs the handler, turning a panic into an error so that a bad
// message costs a retry rather than the service.
func (w *worker) call(ctx context.Context, msg jetstream.Msg) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("streams: handler panicked: %v", r)
		}
	}()
	return w.one(ctx, msg)
}

func (w *worker) deadLetter(ctx context.Context, log *slog.Logger, msg jetstream.Msg, reason string) {
	if err := DeadLetter(ctx, w.js, msg, w.cfg.Component, reason); err != nil {
		log.Error("streams: dead-letter failed, message will be redelivered", "err", err)
		w.settle(log, "nak", msg.NakWithDelay(w.cfg.RetryDelay))
		return
	}
	log.Warn("streams: dead-lettered", "reason", reason)
	w.cfg.Counters.DeadLettered()
	if w.cfg.OnDeadLetter != nil {
		w.cfg.OnDeadLetter(msg, reason)
	}
}

func (w *worker) settle(log *slog.Logger, what string, err error) {
	if err != nil {
		log.Warn("streams: "+what+" failed; the message will be redelivered", "err", err)
	}
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
