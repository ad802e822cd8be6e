// Package trainersvc is the reference external trainer (`rspo serve
// trainer`): it wires the learner core's Apply to the bus. A durable pull
// consumer on rspo.<run>.batch takes each training batch the learner
// published (schemas.TrainBatch), applies it to the built-in policy at the
// version the batch names — the one in hand, or loaded with its trainer
// state from the object store — stores version v+1 with its trainer state
// beside it and announces it with policy.published (Model "<run>-v<v+1>",
// Config a schemas.BatchApplied). It trains exactly as the learner's
// built-in trainer does, bit for bit.
//
// A batch whose version is already stored is announced again, not
// trained again, so redeliveries and restarts are harmless. A batch that
// does not decode, belongs to another run, names a version that is not
// stored or settings this trainer cannot reproduce is dead-lettered on
// rspo.<run>.dlq.trainer with the reason.
package trainersvc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/learner"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// Component names the trainer in dead-letter subjects (rspo.<run>.dlq.trainer).
const Component = "trainer"

// ErrInvalidConfig means a Config failed validation.
var ErrInvalidConfig = errors.New("trainersvc: invalid configuration")

// Config configures a Service. Run is required; every other field has a
// default.
type Config struct {
	// Run is the run whose batches are trained.
	Run string
	// Name names this trainer in its policy.published events
	// (schemas.BatchApplied.Trainer). Default "trainer".
	Name string
	// Durable names the consumer on RSPO_BATCH. Default "trainer-<run>".
	Durable string
	// AckWait is how long the server waits for a batch's ack before
	// redelivering it; the trainer reports progress every AckWait/3 while
	// it trains. Default 5 minutes.
	AckWait time.Duration
	// Logger reports applied and rejected batches. Default slog.Default().
	Logger *slog.Logger
	// Counters, if set, counts the messages the consumer settles.
	Counters streams.Counters
}

// WithDefaults returns a copy with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.Name == "" {
		c.Name = "trainer"
	}
	if c.Durable == "" {
		c.Durable = "trainer-" + c.Run
	}
	if c.AckWait == 0 {
		c.AckWait = 5 * time.Minute
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate reports every problem with the configuration, joined.
func (c Config) Validate() error {
	var errs []error
	if err := streams.ValidateRun(c.Run); err != nil {
		errs = append(errs, fmt.Errorf("%w: %w", ErrInvalidConfig, err))
	}
	if c.AckWait < 0 {
		errs = append(errs, fmt.Errorf("%w: ack wait %v is negative", ErrInvalidConfig, c.AckWait))
	}
	if len(c.Name) > 64 {
		errs = append(errs, fmt.Errorf("%w: name of %d bytes, at most 64", ErrInvalidConfig, len(c.Name)))
	}
	return errors.Join(errs...)
}

// Counts are what a Service has done since it started.
type Counts struct {
	// Applied counts batches trained, Reannounced batches whose version
	// was already stored, Rejected batches dead-lettered.
	Applied, Reannounced, Rejected int64
}

// Service is the trainer of one run.
type Service struct {
	cfg Config
	js  jetstream.JetStream
	// trainer holds π_θ at the version the last batch made (nil before the
	// first), settings the settings it was built with.
	trainer  *learner.Trainer
	settings []byte

	applied, reannounced, rejected atomic.Int64
}

// New validates cfg and returns a service. It does not touch the bus.
func New(js jetstream.JetStream, cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Service{cfg: cfg.WithDefaults(), js: js}, nil
}

// Counts returns what the service has done.
func (s *Service) Counts() Counts {
	return Counts{Applied: s.applied.Load(), Reannounced: s.reannounced.Load(), Rejected: s.rejected.Load()}
}

// Run trains the run's batches until ctx ends.
func (s *Service) Run(ctx context.Context) error {
	s.cfg.Logger.Info("trainer serving", "run", s.cfg.Run, "durable", s.cfg.Durable)
	err := streams.Consume(ctx, s.js, streams.ConsumerConfig{
		Stream: streams.StreamBatch, Durable: s.cfg.Durable, FilterSubject: streams.Subjects(s.cfg.Run).Batch,
		Component: Component, Batch: 1, AckWait: s.cfg.AckWait, Logger: s.cfg.Logger, Counters: s.cfg.Counters,
		OnDeadLetter: func(jetstream.Msg, string) { s.rejected.Add(1) },
	}, streams.Typed(streams.TrainBatches, s.cfg.Run, s.handle))
	n := s.Counts()
	s.cfg.Logger.Info("trainer stopped", "applied", n.Applied, "reannounced", n.Reannounced, "rejected", n.Rejected)
	return err
}

// handle applies one batch, or announces its version again when it is
// already stored.
func (s *Service) handle(ctx context.Context, d streams.Delivery[*schemas.TrainBatch]) error {
	b := d.Value
	next := b.PolicyVersion + 1
	object := streams.PolicyObject(s.cfg.Run, next)
	if size, ok, err := s.stored(ctx, object); err != nil {
		return err
	} else if ok {
		s.reannounced.Add(1)
		s.cfg.Logger.Info("batch already applied; announcing its version again", "update", b.Update, "policy_version", next)
		return s.announce(ctx, b, size, nil)
	}
	if err := s.prepare(ctx, b); err != nil {
		return err
	}
	batch, err := s.trainer.Import(b)
	if err != nil {
		return streams.Rejectf("%v", err)
	}
	stop := heartbeat(d.Msg, s.cfg.AckWait/3)
	st, err := s.trainer.Apply(batch)
	stop()
	if err != nil {
		s.trainer = nil // its state is no longer the stored one's
		return streams.Rejectf("%v", err)
	}
	size, err := s.store(ctx, next)
	if err != nil {
		s.trainer = nil // reload from the store on the retry
		return err
	}
	s.applied.Add(1)
	s.cfg.Logger.Info("batch applied", "update", b.Update, "policy_version", next, "loss", st.Loss, "grad_norm", st.GradNorm)
	return s.announce(ctx, b, size, st.Optimisation())
}

// stored reports whether object is in the policy bucket, and its size.
func (s *Service) stored(ctx context.Context, object string) (uint64, bool, error) {
	store, err := s.js.ObjectStore(ctx, streams.BucketPolicy)
	if err != nil {
		return 0, false, fmt.Errorf("trainersvc: open %s: %w", streams.BucketPolicy, err)
	}
	info, err := store.GetInfo(ctx, object)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("trainersvc: look up %s: %w", object, err)
	}
	return info.Size, true, nil
}

// prepare makes sure the trainer in hand holds the batch's starting
// version with the batch's settings: else it loads that version and the
// trainer state stored beside it (version 0 starts a fresh optimiser, with
// itself as π_ref, as the learner does).
func (s *Service) prepare(ctx context.Context, b *schemas.TrainBatch) error {
	if len(b.Trainer) == 0 {
		return streams.Rejectf("batch of update %d carries no trainer settings; this trainer reproduces the built-in one and needs them", b.Update)
	}
	if s.trainer != nil && s.trainer.Policy().Version() == b.PolicyVersion && bytes.Equal(s.settings, b.Trainer) {
		return nil
	}
	var cfg learner.Config
	if err := json.Unmarshal(b.Trainer, &cfg); err != nil {
		return streams.Rejectf("trainer settings of update %d: %v", b.Update, err)
	}
	p, err := s.loadPolicy(ctx, b.PolicyVersion)
	if err != nil {
		return err
	}
	t, err := learner.New(p, cfg)
	if err != nil {
		return streams.Rejectf("trainer settings of update %d: %v", b.Update, err)
	}
	if b.PolicyVersion > 0 {
		state, err := s.get(ctx, streams.TrainerStateObject(s.cfg.Run, b.PolicyVersion))
		if err != nil {
			return err
		}
		if err := t.RestoreState(state); err != nil {
			return streams.Rejectf("trainer state of version %d: %v", b.PolicyVersion, err)
		}
	}
	s.trainer, s.settings = t, bytes.Clone(b.Trainer)
	s.cfg.Logger.Info("trainer loaded", "policy_version", b.PolicyVersion, "updates", t.Updates())
	return nil
}

// loadPolicy loads version v, which must be a built-in policy snapshot of
// that version.
func (s *Service) loadPolicy(ctx context.Context, v int64) (*policy.Policy, error) {
	b, err := s.get(ctx, streams.PolicyObject(s.cfg.Run, v))
	if err != nil {
		return nil, err
	}
	p, err := policy.Load(b)
	if err != nil {
		return nil, streams.Rejectf("policy version %d is not a built-in policy snapshot: %v", v, err)
	}
	if p.Version() != v {
		return nil, streams.Rejectf("the snapshot of policy version %d holds version %d", v, p.Version())
	}
	return p, nil
}

// get reads an object of the policy bucket; a missing one rejects the
// batch (it names a version this run never stored).
func (s *Service) get(ctx context.Context, object string) ([]byte, error) {
	b, err := streams.GetSnapshot(ctx, s.js, streams.BucketPolicy, object)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, streams.Rejectf("%s is not in the object store: the batch names a version this run does not have", object)
	}
	return b, err
}

// store writes the trainer state, then the snapshot of version v: once the
// snapshot is there, so is the state a later batch resumes from.
func (s *Service) store(ctx context.Context, v int64) (uint64, error) {
	state, err := s.trainer.MarshalState()
	if err != nil {
		return 0, err
	}
	snap, err := s.trainer.Policy().MarshalBinary()
	if err != nil {
		return 0, err
	}
	if err := streams.PutSnapshot(ctx, s.js, streams.BucketPolicy, streams.TrainerStateObject(s.cfg.Run, v), state); err != nil {
		return 0, err
	}
	if err := streams.PutSnapshot(ctx, s.js, streams.BucketPolicy, streams.PolicyObject(s.cfg.Run, v), snap); err != nil {
		return 0, err
	}
	return uint64(len(snap)), nil
}

// announce publishes policy.published for the version b made.
func (s *Service) announce(ctx context.Context, b *schemas.TrainBatch, size uint64, figures map[string]float64) error {
	next := b.PolicyVersion + 1
	applied, err := json.Marshal(schemas.BatchApplied{Trainer: s.cfg.Name, Batch: b.ID(), FromVersion: b.PolicyVersion})
	if err != nil {
		return err
	}
	m := map[string]float64{"snapshot_bytes": float64(size)}
	for k, v := range figures {
		m[k] = v
	}
	e := schemas.Event{Type: schemas.EventPolicyPublished, Run: s.cfg.Run, Time: time.Now().UTC(), PolicyVersion: next,
		Update: b.Update, Object: streams.PolicyObject(s.cfg.Run, next), Model: schemas.DefaultModelName(s.cfg.Run, next),
		Config: applied, Metrics: m}
	_, err = streams.PublishEvent(ctx, s.js, e)
	return err
}

// heartbeat tells the server every interval that msg is still being
// worked on, until the returned stop is called.
func heartbeat(msg jetstream.Msg, interval time.Duration) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(max(interval, time.Second))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = msg.InProgress() // a lost heartbeat only risks a redelivery, which is idempotent
			}
		}
	}()
	return func() { close(done) }
}
