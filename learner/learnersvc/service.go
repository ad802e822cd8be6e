package learnersvc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/buffersvc"
	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/learner"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/prm/prmsvc"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// Service is the learner of one run.
type Service struct {
	cfg    Config
	nc     *nats.Conn
	js     jetstream.JetStream
	env    envs.Env
	buffer *buffersvc.Client

	cp      Checkpoint
	pol     *policy.Policy
	trainer *learner.Trainer
	// builtinSnapshot says whether pol is the latest version's snapshot
	// (always with the built-in trainer; with an external one, while it
	// stores built-in policies): whether in-process evaluation can run.
	builtinSnapshot bool
	prm             *prm.Model
	// refresher retrains the PRM at cycle ends (PRMRefresh).
	refresher *prmsvc.Refresher
	// nextSeq is where the next update's rollouts are looked for.
	nextSeq uint64
	// ignored counts stream messages the learner read and could not use
	// (undecodable, or events that do not answer its plan).
	ignored int64
	// staleRefused counts on-policy trajectories refused for lagging more
	// than MaxStaleness versions behind π_θ.
	staleRefused int64
	// requested is the first update whose rollouts this process has not
	// asked for (requestAhead).
	requested int64
	// nonces derives the nonces of the run's requests and plans (nonce.go).
	nonces NonceKey
	// refused counts trajectories and buffer records this process refused
	// as implausible or not its own (guard.go), beside staleRefused.
	refused int64
	// refusedRecords are the buffer records refused in the cycle
	// refusedCycle: left out of its later samples, dead-lettered once.
	refusedRecords map[string]bool
	refusedCycle   int64
	// refusedOnPolicy are on-policy trajectories the trainer refused
	// (updateguard.go), with the reason: a redone step asks for their
	// requests again.
	refusedOnPolicy map[string]string
	// workSeqs maps the message id of work this process queued and still
	// waits for (rollout requests, evaluation shards) to its sequence in
	// RSPO_WORK: the message an actor's dead letter must be of to count.
	workSeqs map[string]uint64
	// lease is the run's lease the caller acquired (UseLease), or nil:
	// Run acquires its own.
	lease *Lease
	// progress, if set, is told about every finished update; phase about
	// every phase started.
	progress, phase func(Progress)
}

// Progress is what the service reports after each update (OnProgress)
// and when it starts a phase of its work (OnPhase).
type Progress struct {
	Update, Updates int64
	// Cycle is the RSPO cycle, -1 without RSPO.
	Cycle int64
	// SuccessRate is the on-policy batch's success; EvalSuccess the latest
	// evaluation's (first eval split), or -1 before the first.
	SuccessRate, EvalSuccess float64
	// Phase is the phase starting (OnPhase); PhaseUpdated after an update.
	Phase Phase
	// EnvSteps are the run's environment steps so far, actors' and
	// explorers'.
	EnvSteps int64
	// Version is the latest policy version published.
	Version int64
	// VersionLagMax is how many versions the update's oldest on-policy
	// rollout lagged behind the policy it trained (0 without
	// MaxStaleness); StaleRefused counts the on-policy trajectories this
	// process refused as older than MaxStaleness allows, and Refused those
	// and the buffer records it refused as implausible or not the run's
	// own (guard.go). All three only in an update's report.
	VersionLagMax, StaleRefused, Refused int64
	// ShortCycles counts the run's cycles trained without all their
	// exploration (Checkpoint.ShortCycles); only in an update's report.
	ShortCycles int64
}

// Phase is a part of the learner's work, as reported to OnPhase.
type Phase string

// The phases. PhaseUpdated, the zero value, marks an update's report.
const (
	PhaseUpdated   Phase = ""
	PhaseResumed   Phase = "resumed"    // the run resumes from its checkpoint (Update done)
	PhasePRMWarmup Phase = "prm-warmup" // rollouts and training of the initial PRM
	PhaseExploring Phase = "exploring"  // waiting for the explorer's cycle (Cycle)
	PhaseUpdating  Phase = "updating"   // on-policy rollouts, sampling and the update
)

// New validates cfg and returns a service. It does not touch the bus.
func New(nc *nats.Conn, js jetstream.JetStream, cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	env, err := envs.New(cfg.Env, cfg.EnvOptions)
	if err != nil {
		return nil, err
	}
	if len(cfg.EvalSplits) == 0 {
		for _, sp := range env.Splits() {
			if sp != envs.SplitTrain {
				cfg.EvalSplits = append(cfg.EvalSplits, sp)
			}
		}
	}
	s := &Service{cfg: cfg, nc: nc, js: js, env: env, refusedRecords: map[string]bool{}, refusedOnPolicy: map[string]string{}}
	if cfg.RSPO {
		if s.buffer, err = buffersvc.NewClient(nc, cfg.Run); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// OnProgress registers a callback run after every update (from Run's goroutine).
func (s *Service) OnProgress(f func(Progress)) { s.progress = f }

// OnPhase registers a callback run when a phase starts (from Run's goroutine).
func (s *Service) OnPhase(f func(Progress)) { s.phase = f }

// OnBufferSample registers a callback run after every buffer sample call
// with its duration and error (buffersvc.Client.WithObserver). Without
// RSPO the learner samples no buffer and f is never called.
func (s *Service) OnBufferSample(f func(time.Duration, error)) {
	if s.buffer != nil && f != nil {
		s.buffer = s.buffer.WithObserver(f)
	}
}

// startPhase tells the OnPhase callback, if any, that p starts.
func (s *Service) startPhase(p Phase, cycle int64) {
	if s.phase == nil {
		return
	}
	if !s.cfg.RSPO {
		cycle = -1
	}
	s.phase(Progress{Update: s.cp.Update, Updates: int64(s.cfg.Updates), Cycle: cycle, SuccessRate: -1, EvalSuccess: -1,
		Phase: p, EnvSteps: s.cp.EnvStepsActor + s.cp.EnvStepsExplorer, Version: s.cp.Version})
}

// UseLease has Run train under l, the run's lease its caller acquired
// (pipeline.Run takes it before it starts any stage), instead of
// acquiring one itself. The caller releases it.
func (s *Service) UseLease(l *Lease) { s.lease = l }

// Run trains until the configured number of updates is done or ctx ends.
// A run with a checkpoint resumes from it; a finished run returns at once,
// unless more updates are asked of it than it made: then it continues.
// It holds the run's lease throughout (lease.go): a run another learner
// trains is refused at once with a *LeaseHeldError, and if another
// learner takes the lease over Run stops with ErrLeaseLost.
func (s *Service) Run(ctx context.Context) error {
	lease := s.lease
	if lease == nil {
		var err error
		if lease, err = AcquireLease(ctx, s.js, s.cfg.Run, LeaseOptions{TTL: s.cfg.LeaseTTL, Logger: s.cfg.Logger}); err != nil {
			return err
		}
		defer func() {
			if err := lease.Release(context.WithoutCancel(ctx)); err != nil {
				s.cfg.Logger.Warn("learner lease not released: the next learner waits for it to lapse", "err", err)
			}
		}()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-lease.Lost():
			cancel(ErrLeaseLost)
		case <-ctx.Done():
		}
	}()
	err := s.runLeased(ctx)
	if cause := context.Cause(ctx); errors.Is(cause, ErrLeaseLost) {
		return fmt.Errorf("%w: %s stopped at update %d", cause, s.cfg.Run, s.cp.Update)
	}
	return err
}

// runLeased is Run under the lease.
func (s *Service) runLeased(ctx context.Context) error {
	if err := s.start(ctx); err != nil {
		return err
	}
	if s.cp.Finished { // it made all the updates asked for
		return nil
	}
	if s.cp.Update > 0 {
		s.startPhase(PhaseResumed, s.cycleOf(s.cp.Update))
	}
	for s.cp.Update < int64(s.cfg.Updates) {
		if err := s.step(ctx); err != nil {
			if err := s.recoverFrom(ctx, err); err != nil {
				return err
			}
		}
	}
	return s.finish(ctx)
}

// recoverFrom handles a failed step. A step that failed for a reason a
// retry may fix (the bus reconnecting, the buffer restarting, a publish
// not acknowledged in time) is redone from the last checkpoint, exactly as
// a restarted learner would redo it — its rollouts, events and snapshot
// carry the same ids, so JetStream stores them once — after a backoff, for
// up to RetryFor. It returns the error that ends the run, or nil to go on.
func (s *Service) recoverFrom(ctx context.Context, stepErr error) error {
	var p *permanentError
	if ctx.Err() != nil || errors.As(stepErr, &p) {
		return stepErr
	}
	deadline := time.Now().Add(s.cfg.RetryFor)
	wait := 100 * time.Millisecond
	for {
		s.cfg.Logger.Warn("learner step failed; redoing it from the last checkpoint", "update", s.cp.Update+1,
			"err", stepErr, "retry_in", wait)
		select {
		case <-ctx.Done():
			return stepErr
		case <-time.After(wait):
		}
		cp, ok, err := LoadCheckpoint(ctx, s.js, s.cfg.Run)
		if err == nil && ok {
			if err = s.resume(ctx, cp); err == nil {
				return nil
			}
		}
		if err == nil {
			err = errors.New("learnersvc: checkpoint vanished")
		}
		if time.Now().Add(wait).After(deadline) {
			return fmt.Errorf("learnersvc: gave up after %v of retries: %w (step: %v)", s.cfg.RetryFor, err, stepErr)
		}
		stepErr, wait = err, min(2*wait, 5*time.Second)
	}
}

// permanentError marks a step failure no retry can fix (the update itself
// failed, or rollouts never came); the run ends with it.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

func permanent(err error) error { return &permanentError{err: err} }

// Checkpoint returns the service's progress.
func (s *Service) Checkpoint() Checkpoint { return s.cp }

// start restores the checkpoint or begins a new run: policy version 0 (the
// reference), the PRM if one is needed, run.started.
func (s *Service) start(ctx context.Context) error {
	cp, ok, err := LoadCheckpoint(ctx, s.js, s.cfg.Run)
	if err != nil {
		return err
	}
	if s.nonces, err = s.nonceKey(ctx, ok); err != nil {
		return err
	}
	if ok {
		return s.resume(ctx, cp)
	}
	if s.pol, err = s.initialPolicy(); err != nil {
		return err
	}
	s.builtinSnapshot = true
	if err := s.publishPolicy(ctx, 0); err != nil {
		return err
	}
	if s.trainer, err = learner.New(s.pol, s.cfg.trainerConfig()); err != nil {
		return err
	}
	cfgJSON, _ := json.Marshal(s.cfg)
	if err := s.event(ctx, schemas.Event{Type: schemas.EventRunStarted, Config: cfgJSON}); err != nil {
		return err
	}
	if s.cfg.needsPRM() {
		if err := s.initialPRM(ctx); err != nil {
			return err
		}
	}
	return saveCheckpoint(ctx, s.js, s.cfg.Run, s.cp)
}

// initialPolicy is π_θ at version 0: a copy of the configured initial
// policy (a warm start) or a fresh one.
func (s *Service) initialPolicy() (*policy.Policy, error) {
	if s.cfg.InitPolicy == nil {
		return policy.New(s.cfg.Policy)
	}
	p := s.cfg.InitPolicy.Clone()
	p.SetVersion(0)
	return p, nil
}

// resume loads the checkpoint's policy version and the reference policy.
func (s *Service) resume(ctx context.Context, cp Checkpoint) error {
	s.cp, s.nextSeq, s.requested = cp, cp.TrajSeq, 0 // pending requests are published again
	if cp.Finished {
		if int64(s.cfg.Updates) <= cp.Update {
			s.cfg.Logger.Info("run already finished", "run", s.cfg.Run, "updates", cp.Update)
			return nil
		}
		// More updates asked of a finished run: it continues from its last
		// version (extend by a multiple of K to keep whole cycles), and is
		// evaluated and announced finished again at the end.
		s.cfg.Logger.Info("continuing a finished run", "run", s.cfg.Run, "from", cp.Update, "to", s.cfg.Updates)
		s.cp.Finished = false
	}
	ref, err := s.loadPolicy(ctx, 0)
	if err != nil {
		return err
	}
	if s.external() {
		if err := s.restoreExternal(ctx, ref); err != nil {
			return err
		}
	} else if err := s.restoreBuiltin(ctx, ref); err != nil {
		return err
	}
	if cp.PRMVersion > 0 {
		if s.prm, err = loadPRM(ctx, s.js, s.cfg.Run, cp.PRMVersion); err != nil {
			return err
		}
	}
	s.cfg.Logger.Info("resuming run", "run", s.cfg.Run, "update", cp.Update, "policy_version", cp.Version)
	return nil
}

// restoreBuiltin loads the checkpoint's policy version and restores the
// trainer beside it.
func (s *Service) restoreBuiltin(ctx context.Context, ref *policy.Policy) error {
	var err error
	if s.pol, err = s.loadPolicy(ctx, s.cp.Version); err != nil {
		return err
	}
	s.builtinSnapshot = true
	if s.trainer, err = learner.New(s.pol, s.cfg.trainerConfig()); err != nil {
		return err
	}
	return s.restoreTrainer(ctx, ref)
}

// restoreTrainer restores the optimiser state saved with the checkpoint's
// policy version, so a resumed run continues exactly; a run without one
// (version 0) starts the optimiser afresh with ref as the reference.
func (s *Service) restoreTrainer(ctx context.Context, ref *policy.Policy) error {
	b, err := streams.GetSnapshot(ctx, s.js, streams.BucketPolicy, trainerObject(s.cfg.Run, s.cp.Version))
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return s.trainer.SetReference(ref)
	}
	if err != nil {
		return fmt.Errorf("learnersvc: trainer state of version %d: %w", s.cp.Version, err)
	}
	return s.trainer.RestoreState(b)
}

// trainerObject names the trainer state stored beside policy version v.
func trainerObject(run string, v int64) string { return streams.TrainerStateObject(run, v) }

func (s *Service) loadPolicy(ctx context.Context, v int64) (*policy.Policy, error) {
	b, err := streams.GetSnapshot(ctx, s.js, streams.BucketPolicy, streams.PolicyObject(s.cfg.Run, v))
	if err != nil {
		return nil, fmt.Errorf("learnersvc: policy version %d: %w", v, err)
	}
	return policy.Load(b)
}

// publishPolicy stores π_θ's snapshot, announces it, and drops the snapshot
// that fell out of the KeepVersions window (never version 0).
func (s *Service) publishPolicy(ctx context.Context, cycle int64) error {
	b, err := s.pol.MarshalBinary()
	if err != nil {
		return err
	}
	v := s.pol.Version()
	object := streams.PolicyObject(s.cfg.Run, v)
	if err := streams.PutSnapshot(ctx, s.js, streams.BucketPolicy, object, b); err != nil {
		return err
	}
	e := schemas.Event{Type: schemas.EventPolicyPublished, Cycle: cycle, PolicyVersion: v,
		Update: s.cp.Update, Object: object, Model: schemas.DefaultModelName(s.cfg.Run, v), Metrics: map[string]float64{"snapshot_bytes": float64(len(b))}}
	if v > 0 {
		state, err := s.trainer.MarshalState()
		if err != nil {
			return err
		}
		if err := streams.PutSnapshot(ctx, s.js, streams.BucketPolicy, trainerObject(s.cfg.Run, v), state); err != nil {
			return err
		}
	}
	if err := s.event(ctx, e); err != nil {
		return err
	}
	s.pruneVersions(ctx, v)
	s.cp.Version = v
	return nil
}

// pruneVersions drops the snapshot (and trainer state) that version v
// pushed out of the KeepVersions window; version 0 always stays.
func (s *Service) pruneVersions(ctx context.Context, v int64) {
	if old := v - int64(s.cfg.KeepVersions); old > 0 {
		for _, obj := range []string{streams.PolicyObject(s.cfg.Run, old), trainerObject(s.cfg.Run, old)} {
			if err := deleteSnapshot(ctx, s.js, streams.BucketPolicy, obj); err != nil {
				s.cfg.Logger.Warn("old snapshot not deleted", "object", obj, "err", err)
			}
		}
	}
}

func deleteSnapshot(ctx context.Context, js jetstream.JetStream, bucket, object string) error {
	store, err := js.ObjectStore(ctx, bucket)
	if err != nil {
		return err
	}
	err = store.Delete(ctx, object)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil
	}
	return err
}

// finish evaluates the final policy and publishes run.finished.
func (s *Service) finish(ctx context.Context) error {
	final, err := s.evaluate(ctx)
	if err != nil {
		return err
	}
	e := schemas.Event{Type: schemas.EventRunFinished, PolicyVersion: s.cp.Version, Update: s.cp.Update,
		Metrics: final}
	if err := s.event(ctx, e); err != nil {
		return err
	}
	s.cp.Finished = true
	return saveCheckpoint(ctx, s.js, s.cfg.Run, s.cp)
}

// event stamps and publishes a control event.
func (s *Service) event(ctx context.Context, e schemas.Event) error {
	e.Run, e.Time = s.cfg.Run, time.Now().UTC()
	_, err := streams.PublishEvent(ctx, s.js, e)
	return err
}
