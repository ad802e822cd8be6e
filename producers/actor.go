package producers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// ActorConfig configures an actor. Run is required.
type ActorConfig struct {
	// Run names the training run whose work queue the actor serves.
	Run string
	// Name identifies this actor in trajectories' Producer field.
	// Default "actor-<hostname>-<pid>".
	Name string
	// Parallel is how many episodes run at once. Default GOMAXPROCS.
	Parallel int
	// PolicyCache is how many policy versions stay loaded. Default 4.
	PolicyCache int
	// AckWait is how long a request stays claimed without a heartbeat: the
	// actor reports progress every AckWait/3, so a crashed actor's request
	// goes to another actor after at most AckWait. Default 30s.
	AckWait time.Duration
	// StepBudget bounds the environment steps one request may ask for:
	// tasks × group size × the environment's step limit (policy's
	// DefaultMaxSteps for an environment without one). A request over it
	// is dead-lettered with its reason, so a valid-looking but huge request
	// cannot exhaust the actor's memory. Default DefaultStepBudget.
	StepBudget int64
	// Logger receives progress and errors. Default slog.Default().
	Logger *slog.Logger
	// Counters, if set, counts the messages its consumers settle
	// (streams.ConsumerConfig.Counters).
	Counters streams.Counters
	// Backend plays the requested policy version. Default: the built-in
	// policy, loaded from the run's snapshots (a PolicyCache of
	// PolicyCache versions).
	Backend Backend
}

// Component names actors in dead-letter subjects (rspo.<run>.dlq.actor):
// rollout requests and evaluation shards they cannot play go there.
const Component = "actor"

// DefaultStepBudget is the default ActorConfig.StepBudget: about 64 Ki
// steps' worth of trajectories held at once — 40× a default request
// (2 tasks × 8 rollouts × 50 steps) — and a few hundred MB at most.
const DefaultStepBudget = 1 << 16

func (c ActorConfig) withDefaults() ActorConfig {
	fillWorkerDefaults("actor", &c.Name, &c.Parallel, &c.AckWait, &c.Logger)
	if c.StepBudget == 0 {
		c.StepBudget = DefaultStepBudget
	}
	return c
}

// Validate reports every problem with the configuration.
func (c ActorConfig) Validate() error {
	var errs []error
	if c.StepBudget < 0 {
		errs = append(errs, fmt.Errorf("producers: actor step budget %d: want a positive number of steps (0: the default %d)", c.StepBudget, DefaultStepBudget))
	}
	if len(c.Name) > schemas.MaxEvalNameBytes {
		errs = append(errs, fmt.Errorf("producers: actor name of %d bytes: at most %d (it names the player of its evaluation results)", len(c.Name), schemas.MaxEvalNameBytes))
	}
	return errors.Join(append(errs, streams.ValidateRun(c.Run))...)
}

// ActorDurable names the work-queue consumer every actor of run shares.
// Streams hold every run's subjects, so consumer names carry the run.
func ActorDurable(run string) string { return "actors-" + run }

// Actor serves rollout requests from the run's work queue: it loads the
// requested policy version, plays the episodes in parallel and publishes
// each trajectory to rspo.<run>.traj.onpolicy (or .explore, as the request
// says). A request is acknowledged only once all its trajectories are
// stored, so a crashed actor's request is redone by another; the redone
// trajectories carry the same ids and seeds and are deduplicated. Actors
// also play the learner's evaluation shards (rspo.<run>.work.eval, see
// Evaluate) when it splits its evaluations (--eval-shards).
type Actor struct {
	cfg     ActorConfig
	js      jetstream.JetStream
	backend Backend
	envs    rollout.EnvCache
}

// NewActor returns an actor for cfg.
func NewActor(js jetstream.JetStream, cfg ActorConfig) (*Actor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	backend := cfg.Backend
	if backend == nil {
		backend = NewPolicyCache(js, cfg.Run, cfg.PolicyCache)
	}
	return &Actor{cfg: cfg, js: js, backend: backend}, nil
}

// Run serves rollout requests and evaluation shards (evaluator.go) until
// ctx ends, then finishes the request and the shard in hand.
func (a *Actor) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var evalErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		if evalErr = a.runEvaluator(ctx); evalErr != nil {
			cancel() // one consumer failing stops the actor
		}
	}()
	err := a.runRollouts(ctx)
	cancel()
	<-done
	return errors.Join(err, evalErr)
}

// runRollouts serves rollout requests until ctx ends.
func (a *Actor) runRollouts(ctx context.Context) error {
	return streams.Consume(ctx, a.js, streams.ConsumerConfig{
		Stream:        streams.StreamWork,
		Durable:       ActorDurable(a.cfg.Run),
		FilterSubject: streams.Subjects(a.cfg.Run).WorkRollout,
		Component:     Component,
		Batch:         1,
		AckWait:       a.cfg.AckWait,
		Logger:        a.cfg.Logger,
		Counters:      a.cfg.Counters,
	}, streams.Typed(streams.RolloutRequests, a.cfg.Run, a.handle))
}

func (a *Actor) handle(ctx context.Context, d streams.Delivery[schemas.RolloutRequest]) error {
	defer keepAlive(ctx, d.Msg, a.cfg.AckWait/3)()
	trajs, err := a.Serve(ctx, d.Value)
	if err != nil {
		return err
	}
	a.cfg.Logger.Debug("rollout request served", "request", d.Value.ID, "trajectories", len(trajs))
	return nil
}

// Serve plays and publishes every episode of req and returns the
// trajectories. Errors that no retry can fix (an unknown environment or a
// task it cannot build) are returned as rejections.
func (a *Actor) Serve(ctx context.Context, req schemas.RolloutRequest) ([]*schemas.Trajectory, error) {
	env, err := a.envs.Get(req.Env, req.EnvOptions)
	if err != nil {
		return nil, streams.Reject(err)
	}
	if steps := requestSteps(req, env); steps > a.cfg.StepBudget {
		return nil, streams.Rejectf("request %s asks for up to %d environment steps (%d tasks × %d rollouts × %d steps), over the actor's budget of %d",
			req.ID, steps, len(req.Tasks), req.GroupSize, steps/int64(len(req.Tasks)*req.GroupSize), a.cfg.StepBudget)
	}
	pl, err := a.backend.Player(ctx, req.PolicyVersion)
	if err != nil {
		return nil, err // the version may not be visible yet: retry
	}
	trajs, err := rollout.All(ctx, env, pl, rollout.RequestEpisodes(req, a.cfg.Name), a.cfg.Parallel)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, rollout.ErrUnavailable) {
			return nil, err // retry: the server may be back, or serve the version, by then
		}
		return nil, streams.Reject(err)
	}
	if err := publishAll(ctx, a.js, trajs); err != nil {
		return nil, err
	}
	return trajs, nil
}

// publishAll publishes trajectories, each confirmed by its ack, in order.
func publishAll(ctx context.Context, js jetstream.JetStream, trajs []*schemas.Trajectory) error {
	for _, t := range trajs {
		if _, err := streams.PublishTrajectory(ctx, js, t); err != nil {
			return err
		}
	}
	return nil
}

// requestSteps is the most environment steps req can take: every episode
// running to the environment's step limit.
func requestSteps(req schemas.RolloutRequest, env envs.Env) int64 {
	return int64(len(req.Tasks)) * int64(req.GroupSize) * stepLimit(env)
}

// stepLimit is the most steps an episode of env takes: its step limit, or
// policy.DefaultMaxSteps for an environment without one.
func stepLimit(env envs.Env) int64 {
	if l, ok := env.(envs.StepLimiter); ok && l.MaxSteps() > 0 {
		return int64(l.MaxSteps())
	}
	return policy.DefaultMaxSteps
}
