package swapper

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// Component names the swapper in dead-letter subjects (rspo.<run>.dlq.swapper).
const Component = "swapper"

// Config configures a Service. Run is required; every other field has a
// default.
type Config struct {
	// Run is the run whose explorer trajectories are swapped.
	Run string
	// Durable names the consumer on RSPO_TRAJ; swappers with the same name
	// share the work. Default "swapper-<run>".
	Durable string
	// Workers is the number of concurrent fetch loops in this process.
	// Default 2.
	Workers int
	// Batch is how many trajectories one fetch takes; their records are
	// published together and acked once all publishes are acknowledged.
	// Default 64.
	Batch int
	// MaxWait is how long a fetch waits for a batch to fill; it bounds the
	// latency a quiet stream adds. Default 100ms.
	MaxWait time.Duration
	// AckWait is how long the server waits for an ack before redelivering
	// a trajectory to another instance (after a crash). Default 30s.
	AckWait time.Duration
	// Verify replays every trajectory in its environment and dead-letters
	// those whose claims the replay disproves. Default false.
	Verify bool
	// EnvOptions are the environment options for verification (the ones
	// the producers used, e.g. preset). Default nil: each environment's
	// defaults.
	EnvOptions map[string]string
	// PublishTimeout bounds the wait for the swapped stream's
	// acknowledgements of one batch. Default 30s.
	PublishTimeout time.Duration
	// Logger reports rejected trajectories. Default slog.Default().
	Logger *slog.Logger
}

// Validate reports every problem with the configuration, joined.
func (c Config) Validate() error {
	var errs []error
	if err := streams.ValidateRun(c.Run); err != nil {
		errs = append(errs, fmt.Errorf("%w: %w", ErrInvalidConfig, err))
	}
	if c.Workers < 0 || c.Workers > 64 {
		errs = append(errs, fmt.Errorf("%w: workers %d not in 1..64 (0 for the default)", ErrInvalidConfig, c.Workers))
	}
	if c.Batch < 0 || c.Batch > 4096 {
		errs = append(errs, fmt.Errorf("%w: batch %d not in 1..4096 (0 for the default)", ErrInvalidConfig, c.Batch))
	}
	if c.MaxWait < 0 || c.AckWait < 0 || c.PublishTimeout < 0 {
		errs = append(errs, fmt.Errorf("%w: max wait %v, ack wait %v and publish timeout %v must not be negative",
			ErrInvalidConfig, c.MaxWait, c.AckWait, c.PublishTimeout))
	}
	return errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	if c.Durable == "" {
		c.Durable = "swapper-" + c.Run
	}
	c.Workers = orDefault(c.Workers, 2)
	c.Batch = orDefault(c.Batch, 64)
	c.MaxWait = orDefault(c.MaxWait, 100*time.Millisecond)
	c.PublishTimeout = orDefault(c.PublishTimeout, 30*time.Second)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// orDefault returns v, or def when v is zero.
func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Counters are what a Service has done since it started.
type Counters struct {
	// Swapped counts records published (including duplicates of records
	// published before a crash).
	Swapped int64
	// Duplicates counts publishes JetStream recognised as duplicates.
	Duplicates int64
	// Rejected counts trajectories sent to the dead-letter queue.
	Rejected int64
}

// Service is the swapper: explorer trajectories in, buffer records out.
type Service struct {
	js       jetstream.JetStream
	cfg      Config
	verifier *Verifier
	swapped  atomic.Int64
	dups     atomic.Int64
	rejected atomic.Int64
}

// New returns a swapper for cfg. It returns ErrInvalidConfig for a bad cfg.
func New(js jetstream.JetStream, cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Service{js: js, cfg: cfg.withDefaults()}
	if cfg.Verify {
		s.verifier = NewVerifier(cfg.EnvOptions)
	}
	return s, nil
}

// Counters returns the service's counters.
func (s *Service) Counters() Counters {
	return Counters{Swapped: s.swapped.Load(), Duplicates: s.dups.Load(), Rejected: s.rejected.Load()}
}

// Run consumes rspo.<run>.traj.explore until ctx ends, then finishes the
// batches in flight and returns nil. It returns early with an error if the
// consumer cannot be created or the connection is lost.
func (s *Service) Run(ctx context.Context) error {
	cc := streams.ConsumerConfig{
		Stream: streams.StreamTraj, Durable: s.cfg.Durable, Component: Component,
		FilterSubject: streams.Subjects(s.cfg.Run).TrajExplore, Batch: s.cfg.Batch,
		MaxWait: s.cfg.MaxWait, AckWait: s.cfg.AckWait, Logger: s.cfg.Logger,
	}
	errs := make([]error, s.cfg.Workers)
	var wg sync.WaitGroup
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for i := range s.cfg.Workers {
		wg.Go(func() {
			errs[i] = streams.ConsumeBatch(wctx, s.js, cc, s.handle)
			if errs[i] != nil {
				cancel() // one loop cannot go on: stop the others
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// handle swaps a fetched batch: every valid trajectory's record is published
// asynchronously, then each message's result waits for its own publish ack.
func (s *Service) handle(ctx context.Context, msgs []jetstream.Msg) []error {
	results := make([]error, len(msgs))
	futures := make([]jetstream.PubAckFuture, len(msgs))
	for i, msg := range msgs {
		futures[i], results[i] = s.publish(ctx, msg)
	}
	actx, cancel := context.WithTimeout(ctx, s.cfg.PublishTimeout)
	defer cancel()
	for i, f := range futures {
		if f != nil {
			results[i] = s.await(actx, f)
		}
	}
	return results
}

// publish swaps one message and starts publishing its record. A message
// that cannot be swapped yields a RejectError.
func (s *Service) publish(ctx context.Context, msg jetstream.Msg) (jetstream.PubAckFuture, error) {
	out, err := s.Swap(msg.Data())
	if err != nil {
		s.rejected.Add(1)
		s.cfg.Logger.Warn("swapper: rejected trajectory", "subject", msg.Subject(), "err", err)
		return nil, streams.Reject(err)
	}
	data, err := schemas.EncodeTrajectory(out)
	if err != nil {
		s.rejected.Add(1)
		return nil, streams.Reject(err)
	}
	m := &nats.Msg{Subject: streams.Subjects(out.Run).Swapped, Data: data, Header: streams.TrajectoryHeaders(out)}
	f, err := s.js.PublishMsgAsync(m)
	if err != nil {
		return nil, fmt.Errorf("swapper: publish %s: %w", out.ID, err)
	}
	return f, nil
}

// await waits for one publish acknowledgement until ctx ends (the batch's
// publish timeout or shutdown).
func (s *Service) await(ctx context.Context, f jetstream.PubAckFuture) error {
	select {
	case ack := <-f.Ok():
		s.swapped.Add(1)
		if ack.Duplicate {
			s.dups.Add(1)
		}
		return nil
	case err := <-f.Err():
		return fmt.Errorf("swapper: publish to %s: %w", f.Msg().Subject, err)
	case <-ctx.Done():
		return fmt.Errorf("swapper: publish to %s: no acknowledgement: %w", f.Msg().Subject, ctx.Err())
	}
}

// Swap decodes an explorer trajectory message of the service's run,
// verifies it if configured, and returns its relabelled record. Every error
// describes a message no retry can fix.
func (s *Service) Swap(data []byte) (*schemas.Trajectory, error) {
	t, err := schemas.DecodeTrajectory(data)
	if err != nil {
		return nil, err
	}
	if t.Run != s.cfg.Run {
		return nil, fmt.Errorf("swapper: trajectory %s belongs to run %q, not %q", t.ID, t.Run, s.cfg.Run)
	}
	out, err := Relabel(t)
	if err != nil {
		return nil, err
	}
	if s.verifier != nil {
		if err := s.verifier.Verify(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}
