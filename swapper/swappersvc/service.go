// Package swappersvc is the swapper service: it wires the swapper core
// (swapper.Relabel, swapper.Verifier) to the bus. A durable pull consumer
// on rspo.<run>.traj.explore publishes each relabelled record to
// rspo.<run>.swapped (Nats-Msg-Id = trajectory id), acks the source only
// after the publish is acknowledged, and sends invalid or forged input to
// the dead-letter queue with the reason.
//
// Every message is decoded and validated in full (the swapper is the trust
// boundary for explorer output), but the record is not encoded again: it is
// the explorer message's own bytes with the relabelled columns overwritten
// (streams.SwappedMsgFrom, schemas.PatchLabels), the same Arrow IPC stream
// an encode would write. A message in any other shape than the one
// schemas writes (another Arrow writer's, a compressed body) is encoded
// afresh instead (Counters.Encoded). Whether a cycle's trajectories
// are verified, and in which environment options, comes from the cycle's
// plan (schemas.CyclePlan.Verify), or from Config.Verify for every cycle.
// Verified or not, a record is refused if it is not its cycle's — ahead
// of a cycle the learner has not announced, or without the nonce of the
// cycle's plan — or if no episode could have produced it (admit.go).
package swappersvc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/swapper"
)

// ErrInvalidConfig means a Config failed validation.
var ErrInvalidConfig = errors.New("swappersvc: invalid configuration")

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
	// those whose claims the replay disproves, whatever the cycle's plan
	// says (a plan with Verify set asks for it too). Default false.
	Verify bool
	// EnvOptions are the environment options for verifying a trajectory
	// whose cycle has no plan on the bus (a producer other than rspo's
	// explorer). Default nil: each environment's defaults. A trajectory of
	// a planned cycle is replayed with the plan's options.
	EnvOptions map[string]string
	// PublishTimeout bounds the wait for the swapped stream's
	// acknowledgements of one batch. Default 30s.
	PublishTimeout time.Duration
	// Logger reports rejected trajectories. Default slog.Default().
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
	c.Workers = cmp.Or(c.Workers, 2)
	c.Batch = cmp.Or(c.Batch, 64)
	c.MaxWait = cmp.Or(c.MaxWait, 100*time.Millisecond)
	c.PublishTimeout = cmp.Or(c.PublishTimeout, 30*time.Second)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
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
	// Encoded counts records encoded afresh because their explorer message
	// could not be relabelled in its bytes (schemas.PatchLabels); every
	// other record is its explorer message with the labels overwritten.
	Encoded int64
}

// Service is the swapper: explorer trajectories in, buffer records out.
type Service struct {
	js       jetstream.JetStream
	cfg      Config
	verifier *swapper.Verifier
	plans    *planBook
	envs     rollout.EnvCache
	swapped  atomic.Int64
	dups     atomic.Int64
	rejected atomic.Int64
	encoded  atomic.Int64
}

// New returns a swapper for cfg. It returns ErrInvalidConfig for a bad cfg.
func New(js jetstream.JetStream, cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Service{js: js, cfg: cfg.withDefaults(), verifier: swapper.NewVerifier(cfg.EnvOptions),
		plans: newPlanBook(js, cfg.Run, cfg.withDefaults().Logger)}, nil
}

// Counters returns the service's counters.
func (s *Service) Counters() Counters {
	return Counters{Swapped: s.swapped.Load(), Duplicates: s.dups.Load(), Rejected: s.rejected.Load(), Encoded: s.encoded.Load()}
}

// Run consumes rspo.<run>.traj.explore until ctx ends, then finishes the
// batches in flight and returns nil. It returns early with an error if the
// consumer cannot be created or the connection is lost.
func (s *Service) Run(ctx context.Context) error {
	cc := streams.ConsumerConfig{
		Stream: streams.StreamTraj, Durable: s.cfg.Durable, Component: Component,
		FilterSubject: streams.Subjects(s.cfg.Run).TrajExplore, Batch: s.cfg.Batch,
		MaxWait: s.cfg.MaxWait, AckWait: s.cfg.AckWait, Logger: s.cfg.Logger, Counters: s.cfg.Counters,
		OnDeadLetter: func(jetstream.Msg, string) { s.rejected.Add(1) },
	}
	errs := make([]error, s.cfg.Workers)
	var wg sync.WaitGroup
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h := streams.TypedBatch(streams.Trajectories, s.cfg.Run, s.handle)
	for i := range s.cfg.Workers {
		wg.Go(func() {
			errs[i] = streams.ConsumeBatch(wctx, s.js, cc, h)
			if errs[i] != nil {
				cancel() // one loop cannot go on: stop the others
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// handle swaps a fetched batch of the run's trajectories: every valid
// record is published asynchronously, then each message's result waits
// for its own publish ack.
func (s *Service) handle(ctx context.Context, ds []streams.Delivery[*schemas.Trajectory]) []error {
	results := make([]error, len(ds))
	futures := make([]jetstream.PubAckFuture, len(ds))
	cycles := make([]int64, len(ds))
	for i, d := range ds {
		cycles[i] = d.Value.Cycle
	}
	if err := s.plans.load(ctx, cycles); err != nil {
		for i := range results {
			results[i] = err // the plans decide verification: retry rather than guess
		}
		return results
	}
	for i, d := range ds {
		futures[i], results[i] = s.publish(d.Value, d.Msg.Data())
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

// publish swaps one trajectory, decoded from the message data, and starts
// publishing its record: data with the labels overwritten, or the record
// encoded afresh if data cannot be patched. A trajectory that cannot be
// swapped yields a RejectError.
func (s *Service) publish(t *schemas.Trajectory, data []byte) (jetstream.PubAckFuture, error) {
	out, err := s.swap(t)
	if err != nil {
		return nil, streams.Reject(err)
	}
	m, patched, err := streams.SwappedMsgFrom(out, data)
	if err != nil {
		return nil, streams.Reject(err)
	}
	if !patched {
		s.encoded.Add(1)
	}
	f, err := s.js.PublishMsgAsync(m)
	if err != nil {
		return nil, fmt.Errorf("swappersvc: publish %s: %w", out.ID, err)
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
		return fmt.Errorf("swappersvc: publish to %s: %w", f.Msg().Subject, err)
	case <-ctx.Done():
		return fmt.Errorf("swappersvc: publish to %s: no acknowledgement: %w", f.Msg().Subject, ctx.Err())
	}
}

// Swap decodes an explorer trajectory message of the service's run,
// verifies it if configured (by Config.Verify: a message on its own has no
// plan), and returns its relabelled record. Every error describes a
// message no retry can fix.
func (s *Service) Swap(data []byte) (*schemas.Trajectory, error) {
	t, err := schemas.DecodeTrajectory(data)
	if err != nil {
		return nil, err
	}
	if t.Run != s.cfg.Run {
		return nil, fmt.Errorf("swappersvc: trajectory %s belongs to run %q, not %q", t.ID, t.Run, s.cfg.Run)
	}
	return s.swap(t)
}

// swap relabels t and, when its cycle's plan or the configuration asks
// for it, verifies it by replay (in the plan's environment options).
// Before that it refuses what cannot be the cycle's (admit).
func (s *Service) swap(t *schemas.Trajectory) (*schemas.Trajectory, error) {
	out, err := swapper.Relabel(t)
	if err != nil {
		return nil, err
	}
	plan, planned := s.plans.get(t.Cycle)
	if err := checkEnv(t, plan, planned); err != nil {
		return nil, err
	}
	if err := s.admit(t, plan, planned); err != nil {
		return nil, err
	}
	switch {
	case planned && (plan.Verify || s.cfg.Verify):
		err = s.verifier.VerifyWith(t, plan.EnvOptions)
	case s.cfg.Verify:
		err = s.verifier.Verify(t)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// checkEnv refuses a trajectory of an environment this process does not
// know (its success claim could never be checked, and no learner of the
// run acts there) or, for a planned cycle, of another environment than
// the plan's.
func checkEnv(t *schemas.Trajectory, plan schemas.CyclePlan, planned bool) error {
	if !slices.Contains(envs.Names(), t.Env) {
		return fmt.Errorf("swappersvc: trajectory %s of unknown environment %q (known: %v)", t.ID, t.Env, envs.Names())
	}
	if planned && t.Env != plan.Env {
		return fmt.Errorf("swappersvc: trajectory %s of environment %q in cycle %d, which its plan explores in %q", t.ID, t.Env, t.Cycle, plan.Env)
	}
	return nil
}
