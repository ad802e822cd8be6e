package producers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/learner"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/prm/prmsvc"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// ExplorerMode selects how π_B is obtained — the paper's dense-reward
// explorer or one of the controls that tell whether the PRM matters.
type ExplorerMode string

const (
	// ModePRM trains π_B on the PRM named by the cycle plan (the paper's).
	ModePRM ExplorerMode = "prm"
	// ModeFrozen keeps π_B an unchanged copy of π_θ: extra sampling and the
	// buffer's selection only.
	ModeFrozen ExplorerMode = "frozen"
	// ModeRandomPRM trains π_B on an untrained, randomly initialised PRM.
	ModeRandomPRM ExplorerMode = "random-prm"
)

// Valid reports whether m is a known mode.
func (m ExplorerMode) Valid() bool { return m == ModePRM || m == ModeFrozen || m == ModeRandomPRM }

// ExplorerConfig configures an explorer. Run is required.
type ExplorerConfig struct {
	Run string
	// Name identifies this explorer in trajectories. Default
	// "explorer-<hostname>-<pid>".
	Name string
	// Mode is prm (default), frozen or random-prm.
	Mode ExplorerMode
	// Trainer configures π_B's dense-reward updates; its reward source is
	// forced to dense.
	Trainer learner.Config
	// PRMNoise is σ of Gaussian noise added to every PRM score (ablation).
	PRMNoise float64
	// GateAUC, when > 0, turns shaping off (π_B stays a plain copy) for a
	// PRM whose held-out AUC is below it, so a flat PRM never becomes noise.
	GateAUC float64
	// Tilt, when > 0, replaces π_B's dense-reward training by acting-time
	// steering: π_B(a|s) ∝ π_θ(a|s)·exp(Tilt·r̂(s,a)), the closed-form
	// maximiser of E[r̂] − KL(π_B‖π_θ)/Tilt per step. The explorer then
	// takes no training rollouts: it spends only its collection's
	// environment steps (Collect, or GroupSize when the plan's Collect
	// is 0, rollouts per task). Its rollouts record log π_B, the tilted
	// log-prob, as the behaviour log-prob the generalized clip needs.
	Tilt float64
	// RandomPRMSeed seeds the random-prm control's PRM. Default 1.
	RandomPRMSeed uint64
	// Parallel is how many episodes run at once. Default GOMAXPROCS.
	Parallel int
	// AckWait is how long a cycle stays claimed without a heartbeat: the
	// explorer reports progress every AckWait/3, so a crashed explorer's
	// cycle is redelivered to another (or the restarted) explorer after at
	// most AckWait. Default 30s.
	AckWait time.Duration
	Logger  *slog.Logger
}

func (c ExplorerConfig) withDefaults() ExplorerConfig {
	fillWorkerDefaults("explorer", &c.Name, &c.Parallel, &c.AckWait, &c.Logger)
	if c.Mode == "" {
		c.Mode = ModePRM
	}
	if c.RandomPRMSeed == 0 {
		c.RandomPRMSeed = 1
	}
	c.Trainer.Rewards = learner.RewardDense
	return c
}

// Validate reports every problem with the configuration.
func (c ExplorerConfig) Validate() error {
	if err := streams.ValidateRun(c.Run); err != nil {
		return err
	}
	if c.Mode != "" && !c.Mode.Valid() {
		return fmt.Errorf("producers: explorer mode %q: want prm, frozen or random-prm", c.Mode)
	}
	if err := ValidateShaping(c.PRMNoise, c.GateAUC, c.Tilt); err != nil {
		return err
	}
	c.Trainer.Rewards = learner.RewardDense
	return c.Trainer.Validate()
}

// ValidateShaping checks the settings of how an explorer uses its PRM:
// the noise σ on its scores, the AUC gate and the tilt λ.
func ValidateShaping(noise, gateAUC, tilt float64) error {
	var errs []error
	if noise < 0 || gateAUC < 0 || gateAUC > 1 {
		errs = append(errs, fmt.Errorf("producers: explorer PRM noise %v must be ≥ 0 and gate AUC %v in [0, 1]", noise, gateAUC))
	}
	if tilt < 0 || math.IsNaN(tilt) || math.IsInf(tilt, 0) {
		errs = append(errs, fmt.Errorf("producers: explore tilt %v: want a finite λ ≥ 0 (0: train π_B on the dense reward)", tilt))
	}
	if tilt > 0 && noise > 0 {
		errs = append(errs, fmt.Errorf("producers: explore tilt and PRM noise together: noise is not applied to tilted action scores; use one"))
	}
	return errors.Join(errs...)
}

// ExplorerDurable names the consumer of cycle.started events shared by run's
// explorers: each cycle is explored by one of them.
func ExplorerDurable(run string) string { return "explorers-" + run }

// Explorer runs RSPO's stage 1 for every cycle.started event: π_B ← π_θ(v);
// k dense-reward updates of π_B scored by the PRM; the final π_B's rollouts
// (and, with SwapAll, every training rollout) published to
// rspo.<run>.traj.explore for the swapper; then cycle.explored.
type Explorer struct {
	cfg      ExplorerConfig
	js       jetstream.JetStream
	policies *PolicyCache
	envs     envCache
}

// NewExplorer returns an explorer for cfg.
func NewExplorer(js jetstream.JetStream, cfg ExplorerConfig) (*Explorer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &Explorer{cfg: cfg, js: js, policies: NewPolicyCache(js, cfg.Run, 2)}, nil
}

// Run explores cycles until ctx ends.
func (x *Explorer) Run(ctx context.Context) error {
	return streams.Consume(ctx, x.js, streams.ConsumerConfig{
		Stream:        streams.StreamCtrl,
		Durable:       ExplorerDurable(x.cfg.Run),
		FilterSubject: streams.Subjects(x.cfg.Run).Ctrl(schemas.EventCycleStarted),
		Component:     "explorer",
		Batch:         1,
		AckWait:       x.cfg.AckWait,
		Logger:        x.cfg.Logger,
	}, x.handle)
}

func (x *Explorer) handle(ctx context.Context, msg jetstream.Msg) error {
	e, err := schemas.DecodeEvent(msg.Data())
	if err != nil {
		return streams.Reject(err)
	}
	plan, err := schemas.CyclePlanOf(e)
	if err != nil {
		return streams.Reject(err)
	}
	defer keepAlive(ctx, msg, x.cfg.AckWait/3)()
	_, err = x.Explore(ctx, e, plan)
	return err
}

// ExploreResult summarises one cycle's exploration.
type ExploreResult struct {
	Published  int   // trajectories published for the swap
	EnvSteps   int64 // every environment step the explorer took
	Shaped     bool  // false when π_B stayed a plain copy (frozen or gated)
	PRMVersion int64
}

// Explore carries out one cycle's plan and announces cycle.explored.
func (x *Explorer) Explore(ctx context.Context, e schemas.Event, plan schemas.CyclePlan) (ExploreResult, error) {
	env, err := x.envs.get(plan.Env, plan.EnvOptions)
	if err != nil {
		return ExploreResult{}, streams.Reject(err)
	}
	base, err := x.policies.Get(ctx, e.PolicyVersion)
	if err != nil {
		return ExploreResult{}, err
	}
	model, err := x.prm(ctx, plan)
	if err != nil {
		return ExploreResult{}, err
	}
	c := cycleRun{x: x, env: env, plan: plan, cycle: e.Cycle, update: e.Update, model: model}
	res, err := c.explore(ctx, base.Clone())
	if err != nil {
		return res, err
	}
	done := schemas.Event{Type: schemas.EventCycleExplored, Run: x.cfg.Run, Time: time.Now().UTC(),
		Cycle: e.Cycle, PolicyVersion: e.PolicyVersion, PRMVersion: res.PRMVersion,
		Trajectories: int64(res.Published), Metrics: map[string]float64{
			"env_steps": float64(res.EnvSteps), "shaped": boolFloat(res.Shaped)}}
	if _, err := streams.PublishEvent(ctx, x.js, done); err != nil {
		return res, err
	}
	return res, nil
}

// prm returns the model to score with, or nil when π_B is not trained.
func (x *Explorer) prm(ctx context.Context, plan schemas.CyclePlan) (*prm.Model, error) {
	switch x.cfg.Mode {
	case ModeFrozen:
		return nil, nil
	case ModeRandomPRM:
		return prm.Random(x.cfg.RandomPRMSeed), nil
	}
	if plan.PRMVersion == 0 {
		return nil, streams.Rejectf("cycle plan names no PRM version for a prm-mode explorer")
	}
	m, err := prmsvc.Load(ctx, x.js, x.cfg.Run, plan.PRMVersion)
	if err != nil {
		return nil, fmt.Errorf("producers: PRM version %d: %w", plan.PRMVersion, err)
	}
	if x.cfg.GateAUC > 0 && !m.ShapingEnabled(x.cfg.GateAUC) {
		x.cfg.Logger.Info("PRM below the AUC gate: explorer stays a plain copy",
			"prm_version", m.Version, "auc", m.Info.HeldoutAUC, "gate", x.cfg.GateAUC)
		return nil, nil
	}
	return m, nil
}

// cycleRun is the state of one cycle's exploration.
type cycleRun struct {
	x     *Explorer
	env   envs.Env
	plan  schemas.CyclePlan
	cycle int64
	// update is the learner's update counter when the cycle started.
	update int64
	model  *prm.Model
	// tilt steers the rollouts at acting time (nil: π_B samples itself).
	tilt policy.ActionScorer
	seq  uint64
	res  ExploreResult
}

func (c *cycleRun) explore(ctx context.Context, pB *policy.Policy) (ExploreResult, error) {
	if c.model != nil && c.x.cfg.Tilt > 0 {
		return c.exploreTilted(ctx, pB)
	}
	if c.model != nil {
		c.res.Shaped, c.res.PRMVersion = true, c.model.Version
		tr, err := learner.New(pB, c.x.cfg.Trainer)
		if err != nil {
			return c.res, err
		}
		for u := 0; u < c.plan.Updates; u++ {
			trajs, err := c.rollouts(ctx, pB, fmt.Sprintf("c%d-u%d", c.cycle, u), c.plan.GroupSize)
			if err != nil {
				return c.res, err
			}
			stats, err := tr.Update(trajs, nil)
			if err != nil {
				return c.res, fmt.Errorf("producers: explorer update %d of cycle %d: %w", u, c.cycle, err)
			}
			c.report(ctx, trajs, stats.Map(), u)
			if c.plan.SwapAll {
				if err := c.publish(ctx, trajs); err != nil {
					return c.res, err
				}
			}
		}
	}
	if c.plan.Collect > 0 || c.model == nil {
		collect := c.plan.Collect
		if collect == 0 {
			collect = c.plan.GroupSize // unshaped: nothing was published while training
		}
		trajs, err := c.rollouts(ctx, pB, fmt.Sprintf("c%d-final", c.cycle), collect)
		if err != nil {
			return c.res, err
		}
		c.report(ctx, trajs, nil, c.plan.Updates)
		if err := c.publish(ctx, trajs); err != nil {
			return c.res, err
		}
	}
	return c.res, nil
}

// exploreTilted collects the plan's rollouts with π_θ tilted by the PRM:
// no training rollouts, so every explorer step lands in the buffer.
func (c *cycleRun) exploreTilted(ctx context.Context, pB *policy.Policy) (ExploreResult, error) {
	c.res.Shaped, c.res.PRMVersion = true, c.model.Version
	c.tilt = c.model
	collect := c.plan.Collect
	if collect == 0 {
		collect = c.plan.GroupSize
	}
	trajs, err := c.rollouts(ctx, pB, fmt.Sprintf("c%d-tilt", c.cycle), collect)
	if err != nil {
		return c.res, err
	}
	c.report(ctx, trajs, nil, 0)
	return c.res, c.publish(ctx, trajs)
}

// rollouts plays n episodes of every task with π_B and labels each step
// with the PRM's dense reward (the label the swapper will replace).
func (c *cycleRun) rollouts(ctx context.Context, pB *policy.Policy, tag string, n int) ([]*schemas.Trajectory, error) {
	eps := make([]Episode, 0, len(c.plan.Tasks)*n)
	for i, ref := range c.plan.Tasks {
		for j := 0; j < n; j++ {
			seq := uint64(i*n + j)
			eps = append(eps, Episode{Task: TaskOf(ref), Opts: policy.RolloutOptions{
				Seed:   EpisodeSeed(c.plan.Seed, tag, i, j),
				ID:     schemas.TrajectoryID(c.x.cfg.Run, schemas.SourceExplore, tag, seq),
				Source: schemas.SourceExplore, Run: c.x.cfg.Run, Producer: c.x.cfg.Name,
				GroupID: tag + "/" + ref.ID, Cycle: c.cycle, Seq: seq,
				Tilt: c.tilt, TiltStrength: c.x.cfg.Tilt,
			}})
		}
	}
	trajs, err := RolloutAll(ctx, c.env, pB, eps, c.x.cfg.Parallel)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, streams.Reject(err)
	}
	c.res.EnvSteps += EnvSteps(trajs)
	c.score(trajs, tag)
	return trajs, nil
}

// score writes the PRM's per-step rewards into DenseReward and Reward.
func (c *cycleRun) score(trajs []*schemas.Trajectory, tag string) {
	if c.model == nil {
		return
	}
	var opts []prm.ScoreOption
	if c.x.cfg.PRMNoise > 0 {
		seed := uint64(EpisodeSeed(c.plan.Seed, tag, "noise"))
		opts = append(opts, prm.WithNoise(c.x.cfg.PRMNoise, rand.New(rand.NewPCG(seed, 0x6e6f697365))))
	}
	for k, scores := range c.model.ScoreBatch(trajs, opts...) {
		for i := range trajs[k].Steps {
			trajs[k].Steps[i].DenseReward = scores[i]
			trajs[k].Steps[i].Reward = scores[i]
		}
	}
}

func (c *cycleRun) publish(ctx context.Context, trajs []*schemas.Trajectory) error {
	if err := publishAll(ctx, c.x.js, trajs); err != nil {
		return err
	}
	c.res.Published += len(trajs)
	return nil
}

// report publishes the explorer's figures for one update (or the final
// collection): true success and dense return, the two curves whose
// divergence is reward hacking.
func (c *cycleRun) report(ctx context.Context, trajs []*schemas.Trajectory, stats map[string]float64, u int) {
	// x_update spreads the cycle's explorer updates over the learner
	// updates they precede, for plotting beside the learner's curves.
	values := map[string]float64{"env_steps": float64(c.res.EnvSteps), "explore_update": float64(u),
		"x_update": float64(c.update) + float64(u)/float64(c.plan.Updates+1)}
	for k, v := range stats {
		values[k] = v
	}
	var success, dense float64
	for _, t := range trajs {
		success += boolFloat(t.Success)
		for _, s := range t.Steps {
			dense += s.DenseReward
		}
	}
	values["success_rate"] = success / float64(max(1, len(trajs)))
	values["dense_return"] = dense / float64(max(1, len(trajs)))
	m := schemas.MetricsEvent{Run: c.x.cfg.Run, Component: "explorer", Time: time.Now().UTC(),
		Kind: "explore", Cycle: c.cycle, Update: c.update, Values: values}
	if _, err := streams.PublishMetrics(ctx, c.x.js, m); err != nil {
		c.x.cfg.Logger.Warn("explorer metrics not published", "err", err)
	}
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
