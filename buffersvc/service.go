package buffersvc

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
	"github.com/nats-io/nats.go/micro"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// Component names the buffer in dead-letter subjects (rspo.<run>.dlq.buffer).
const Component = "buffer"

// ServiceName is the NATS micro service name the buffer registers.
const ServiceName = "rspo-buffer"

// serviceVersion is the micro service's version (SemVer).
const serviceVersion = "1.0.0"

// Config configures a Service. Run is required.
type Config struct {
	// Run is the run whose records the buffer holds.
	Run string
	// Durable names the consumer of rspo.<run>.swapped. Default
	// "buffer-<run>". Each buffer service of a run needs its own durable
	// (each keeps a full copy); instances sharing one would split the records.
	Durable string
	// Batch is how many records one fetch takes and one synced commit
	// stores. Default 256.
	Batch int
	// MaxWait is how long a fetch waits for a batch to fill; it bounds the
	// latency a quiet stream adds. Default 100ms.
	MaxWait time.Duration
	// AckWait is how long the server waits for an ack before redelivering
	// a record to another instance (after a crash). Default 30s.
	AckWait time.Duration
	// KeepCycles is how many ended cycles survive clearing: on
	// cycle.ended(c) the cycles ≤ c-KeepCycles are deleted. Default 0, the
	// paper's: the buffer holds only the current cycle's explorer data.
	KeepCycles int
	// Logger reports rejected records. Default slog.Default().
	Logger *slog.Logger
	// Counters, if set, counts the messages its consumers settle
	// (streams.ConsumerConfig.Counters).
	Counters streams.Counters
}

// Validate reports every problem with the configuration, joined.
func (c Config) Validate() error {
	var errs []error
	if err := streams.ValidateRun(c.Run); err != nil {
		errs = append(errs, fmt.Errorf("%w: %w", ErrInvalidConfig, err))
	}
	if c.Batch < 0 || c.Batch > 4096 {
		errs = append(errs, fmt.Errorf("%w: batch %d not in 1..4096 (0 for the default)", ErrInvalidConfig, c.Batch))
	}
	if c.MaxWait < 0 || c.AckWait < 0 {
		errs = append(errs, fmt.Errorf("%w: max wait %v and ack wait %v must not be negative", ErrInvalidConfig, c.MaxWait, c.AckWait))
	}
	if c.KeepCycles < 0 {
		errs = append(errs, fmt.Errorf("%w: keep cycles %d is negative", ErrInvalidConfig, c.KeepCycles))
	}
	return errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	if c.Durable == "" {
		c.Durable = "buffer-" + c.Run
	}
	if c.Batch == 0 {
		c.Batch = 256
	}
	if c.MaxWait == 0 {
		c.MaxWait = 100 * time.Millisecond
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Service materialises rspo.<run>.swapped into a Store, clears it on
// cycle.ended, and answers sample and stats requests.
type Service struct {
	nc    *nats.Conn
	js    jetstream.JetStream
	store *Store
	cfg   Config
	// gate checks cycle events against the learner's cycle record.
	gate *streams.CycleGate

	stored, replaced, dropped, dead, batches atomic.Int64
	// samples holds the sample requests waiting, per client.
	samples *fairQueue[micro.Request]
	// healing is held for writing while a heal rebuilds the store aside
	// and swaps it in, and for reading by every write to the store.
	healing sync.RWMutex
}

// NewService returns a buffer service over store, which the caller opens and
// closes. It returns ErrInvalidConfig for a bad cfg.
func NewService(nc *nats.Conn, js jetstream.JetStream, store *Store, cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Service{nc: nc, js: js, store: store, cfg: cfg.withDefaults(), gate: streams.NewCycleGate(js, cfg.Run),
		samples: newFairQueue[micro.Request]()}, nil
}

// Counters returns what the service has ingested since it started.
func (s *Service) Counters() IngestCounters {
	return IngestCounters{Stored: s.stored.Load(), Replaced: s.replaced.Load(), Dropped: s.dropped.Load(),
		DeadLettered: s.dead.Load(), Batches: s.batches.Load()}
}

// Run rebuilds a store that disagrees with the log (lost, or outliving the
// bus's store: see reconcileWithLog), registers the
// micro service and consumes the swapped records, the
// cycle.ended events and (to dead-letter those the learner did not send)
// the cycle.started events until ctx ends; then it stops answering, finishes the
// batches in flight and returns nil. It returns early with an error if a
// consumer cannot be created or the connection is lost.
func (s *Service) Run(ctx context.Context) error {
	if err := s.reconcileWithLog(ctx); err != nil {
		return err
	}
	svc, err := s.addMicro()
	if err != nil {
		return err
	}
	defer svc.Stop()
	sub := streams.Subjects(s.cfg.Run)
	loops := []func(context.Context) error{
		s.serveSamples,
		func(ctx context.Context) error {
			return streams.ConsumeBatch(ctx, s.js, streams.ConsumerConfig{
				Stream: streams.StreamSwapped, Durable: s.cfg.Durable, Component: Component,
				FilterSubject: sub.Swapped, Batch: s.cfg.Batch, MaxWait: s.cfg.MaxWait, AckWait: s.cfg.AckWait,
				Logger: s.cfg.Logger, Counters: s.cfg.Counters, OnDeadLetter: s.countDeadLetter,
			}, streams.TypedBatch(streams.Trajectories, s.cfg.Run, s.ingest))
		},
		func(ctx context.Context) error {
			return streams.Consume(ctx, s.js, streams.ConsumerConfig{
				Stream: streams.StreamCtrl, Durable: s.cfg.Durable + "-clear", Component: Component,
				FilterSubject: sub.Ctrl(cycleEnded), AckWait: s.cfg.AckWait, Logger: s.cfg.Logger,
				Counters: s.cfg.Counters,
			}, streams.Typed(streams.Events, s.cfg.Run, s.clear))
		},
		func(ctx context.Context) error {
			return streams.Consume(ctx, s.js, streams.ConsumerConfig{
				Stream: streams.StreamCtrl, Durable: s.cfg.Durable + "-started", Component: Component,
				FilterSubject: sub.Ctrl(schemas.EventCycleStarted), AckWait: s.cfg.AckWait, Logger: s.cfg.Logger,
				Counters: s.cfg.Counters,
			}, streams.Typed(streams.Events, s.cfg.Run, s.audit))
		},
	}
	return runAll(ctx, loops)
}

// countDeadLetter counts a dead-lettered record.
func (s *Service) countDeadLetter(jetstream.Msg, string) { s.dead.Add(1) }

// runAll runs the loops until ctx ends or one fails, which stops the others.
func runAll(ctx context.Context, loops []func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(loops))
	var wg sync.WaitGroup
	for i, loop := range loops {
		wg.Go(func() {
			if errs[i] = loop(ctx); errs[i] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// addMicro registers the sample and stats endpoints.
func (s *Service) addMicro() (micro.Service, error) {
	sub := streams.Subjects(s.cfg.Run)
	svc, err := micro.AddService(s.nc, micro.Config{
		Name: ServiceName, Version: serviceVersion, Metadata: map[string]string{"run": s.cfg.Run},
		Description: "rspo replay buffer: prioritized samples of outcome-labelled explorer trajectories",
	})
	if err != nil {
		return nil, fmt.Errorf("buffersvc: register micro service: %w", err)
	}
	endpoints := []struct {
		name, subject string
		h             micro.HandlerFunc
	}{
		{"sample", sub.BufferSample, s.queueSample},
		{"stats", sub.BufferStats, s.handleStats},
	}
	for _, e := range endpoints {
		if err := svc.AddEndpoint(e.name, e.h, micro.WithEndpointSubject(e.subject)); err != nil {
			return nil, errors.Join(fmt.Errorf("buffersvc: add endpoint %s: %w", e.subject, err), svc.Stop())
		}
	}
	return svc, nil
}
