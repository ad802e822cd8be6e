package producers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/learner"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/prm/prmsvc"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// ExplorerConfig configures an explorer. Run is required. How the
// explorer explores (mode, tilt, PRM noise, AUC gate, π_B's trainer) is not
// configured here: every cycle's plan carries it, as the learner decided.
type ExplorerConfig struct {
	Run string
	// Name identifies this explorer in trajectories. Default
	// "explorer-<hostname>-<pid>".
	Name string
	// RandomPRMSeed seeds the random-prm control's PRM. Default 1.
	RandomPRMSeed uint64
	// Parallel is how many episodes run at once. Default GOMAXPROCS.
	Parallel int
	// AckWait is how long a shard stays claimed without a heartbeat: the
	// explorer reports progress every AckWait/3, so a crashed explorer's
	// shard is redelivered to another (or the restarted) explorer after at
	// most AckWait. Default 30s.
	AckWait time.Duration
	Logger  *slog.Logger
	// Counters, if set, counts the shards its consumer settles
	// (streams.ConsumerConfig.Counters).
	Counters streams.Counters
	// StepBudget bounds the environment steps' worth of rollouts the
	// explorer holds at once for a shard: one update of π_B's training
	// (every task of the cycle × the plan's group) or the shard's
	// collection, every episode counted at the environment's step limit
	// (policy.DefaultMaxSteps for an environment without one). ShardBudget
	// bounds the steps of a shard in all. A shard over either is
	// dead-lettered with its reason before anything is played, as an
	// actor's rollout request over its budget is. Defaults
	// DefaultExploreStepBudget and DefaultShardStepBudget.
	StepBudget, ShardBudget int64
	// Backend, if set, plays π_θ of each cycle's version through it (a
	// policy behind an inference server, llm.Backend): the tilted mode
	// (by sampling-importance-resampling, see llm.Player) and the frozen
	// control. A plan that trains π_B (the paper's explorer, the random-PRM
	// control) needs the built-in policy and is dead-lettered with the
	// reason. Default nil: the built-in policy.
	Backend Backend
}

func (c ExplorerConfig) withDefaults() ExplorerConfig {
	fillWorkerDefaults("explorer", &c.Name, &c.Parallel, &c.AckWait, &c.Logger)
	if c.RandomPRMSeed == 0 {
		c.RandomPRMSeed = 1
	}
	if c.StepBudget == 0 {
		c.StepBudget = DefaultExploreStepBudget
	}
	if c.ShardBudget == 0 {
		c.ShardBudget = DefaultShardStepBudget
	}
	return c
}

// Validate reports every problem with the configuration.
func (c ExplorerConfig) Validate() error {
	return errors.Join(streams.ValidateRun(c.Run), validateBudgets(c.StepBudget, c.ShardBudget))
}

// TrainerOf decodes π_B's trainer configuration from a plan, with the
// reward source forced to the dense reward.
func TrainerOf(plan schemas.CyclePlan) (learner.Config, error) {
	var tc learner.Config
	if len(plan.Trainer) > 0 {
		if err := json.Unmarshal(plan.Trainer, &tc); err != nil {
			return tc, fmt.Errorf("producers: plan trainer: %w", err)
		}
	}
	tc.Rewards = learner.RewardDense
	return tc, tc.Validate()
}

// ExplorerComponent names explorers in dead-letter subjects
// (rspo.<run>.dlq.explorer): explore shards they cannot explore go there.
const ExplorerComponent = "explorer"

// ExplorerDurable names the work-queue consumer of explore shards
// (rspo.<run>.work.explore) that run's explorers share: each shard is
// explored by one of them.
func ExplorerDurable(run string) string { return "explorers-" + run }

// Explorer runs RSPO's stage 1 for every explore shard the learner queues:
// π_B ← π_θ(v) as the cycle's plan (read from its cycle.started event)
// says — k dense-reward updates of π_B scored by the PRM, acting-time
// tilting, or a control — then the shard's rollouts of the final π_B (and,
// with SwapAll, its tasks' training rollouts) published to
// rspo.<run>.traj.explore for the swapper, then the shard's
// cycle.explored. A trained π_B learns from every task of the cycle in
// every shard, so explorers agree on it: sharding splits the collection,
// not π_B's training.
type Explorer struct {
	cfg      ExplorerConfig
	js       jetstream.JetStream
	policies *PolicyCache
	envs     rollout.EnvCache
	plans    *cyclePlans
}

// NewExplorer returns an explorer for cfg.
func NewExplorer(js jetstream.JetStream, cfg ExplorerConfig) (*Explorer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &Explorer{cfg: cfg, js: js, policies: NewPolicyCache(js, cfg.Run, 2), plans: newCyclePlans(js, cfg.Run)}, nil
}

// Run explores shards until ctx ends. The shard in hand is then given
// back at once, its episodes in play stopping at their next step, rather
// than finished: a shard can take minutes, another explorer (or this one
// restarted) redoes it with the same seeds and trajectory ids, and a stop
// must not wait for it.
func (x *Explorer) Run(ctx context.Context) error {
	return streams.Consume(ctx, x.js, streams.ConsumerConfig{
		Stream:        streams.StreamWork,
		Durable:       ExplorerDurable(x.cfg.Run),
		FilterSubject: streams.Subjects(x.cfg.Run).WorkExplore,
		Component:     ExplorerComponent,
		Batch:         1,
		AckWait:       x.cfg.AckWait,
		GiveBack:      true,
		Logger:        x.cfg.Logger,
		Counters:      x.cfg.Counters,
	}, streams.Typed(streams.ExploreShards, x.cfg.Run, x.handle))
}

func (x *Explorer) handle(ctx context.Context, d streams.Delivery[schemas.ExploreShard]) error {
	defer keepAlive(ctx, d.Msg, x.cfg.AckWait/3)()
	started, plan, err := x.plans.get(ctx, d.Value.Cycle, d.Value.PolicyVersion)
	if err != nil {
		return err
	}
	if err := d.Value.CheckPlan(plan); err != nil {
		return streams.Reject(err)
	}
	res, err := x.ExploreShard(ctx, started, plan, d.Value.Shard)
	if err != nil {
		return err
	}
	x.cfg.Logger.Debug("explore shard done", "cycle", d.Value.Cycle, "shard", d.Value.Shard, "shards", d.Value.Shards,
		"trajectories", res.Published)
	return nil
}

// ExploreResult summarises one shard's exploration.
type ExploreResult struct {
	Published  int   // trajectories published for the swap
	EnvSteps   int64 // every environment step the explorer took, π_B's training included
	Shaped     bool  // false when π_B stayed a plain copy (frozen or gated)
	PRMVersion int64
}

// Explore carries out the whole plan of the cycle.started event e, one
// shard after another, and announces each shard's cycle.explored: what the
// explorers of a run do between them. The result sums the shards'.
func (x *Explorer) Explore(ctx context.Context, e schemas.Event, plan schemas.CyclePlan) (ExploreResult, error) {
	var sum ExploreResult
	for k := range plan.ShardCount() {
		res, err := x.ExploreShard(ctx, e, plan, k)
		sum.Published += res.Published
		sum.EnvSteps += res.EnvSteps
		sum.Shaped, sum.PRMVersion = res.Shaped, res.PRMVersion
		if err != nil {
			return sum, err
		}
	}
	return sum, nil
}

// ExploreShard carries out shard (0 ≤ shard < plan.ShardCount()) of the
// plan of the cycle.started event e and announces the shard's
// cycle.explored. Shard 0 of a one-shard plan is the whole cycle.
func (x *Explorer) ExploreShard(ctx context.Context, e schemas.Event, plan schemas.CyclePlan, shard int) (ExploreResult, error) {
	if err := plan.Validate(); err != nil {
		return ExploreResult{}, streams.Reject(err)
	}
	if shard < 0 || shard >= plan.ShardCount() {
		return ExploreResult{}, streams.Rejectf("shard %d of a cycle plan with %d shards", shard, plan.ShardCount())
	}
	trainer, err := TrainerOf(plan)
	if err != nil {
		return ExploreResult{}, streams.Reject(err)
	}
	env, err := x.envs.Get(plan.Env, plan.EnvOptions)
	if err != nil {
		return ExploreResult{}, streams.Reject(err)
	}
	if err := x.checkBudget(e.Cycle, plan, env, shard); err != nil {
		return ExploreResult{}, err
	}
	var pB *policy.Policy // a copy of π_θ, trained or not; nil when the backend plays
	if x.cfg.Backend == nil {
		base, err := x.policies.Get(ctx, e.PolicyVersion)
		if err != nil {
			return ExploreResult{}, err
		}
		pB = base.Clone()
	}
	model, err := x.prm(ctx, plan)
	if err != nil {
		return ExploreResult{}, err
	}
	c := cycleRun{x: x, env: env, plan: plan, trainer: trainer, cycle: e.Cycle, update: e.Update, model: model, shard: shard}
	c.lo, c.hi = plan.ShardTasks(shard)
	if x.cfg.Backend != nil {
		if c.player, err = x.servedPlayer(ctx, e.PolicyVersion, plan, model); err != nil {
			return ExploreResult{}, err
		}
	}
	res, err := c.explore(ctx, pB)
	if err != nil {
		return res, err
	}
	done := schemas.Event{Type: schemas.EventCycleExplored, Run: x.cfg.Run, Time: time.Now().UTC(),
		Cycle: e.Cycle, PolicyVersion: e.PolicyVersion, PRMVersion: res.PRMVersion,
		Shard: int64(shard), Shards: int64(plan.ShardCount()),
		Trajectories: int64(res.Published), Metrics: map[string]float64{
			"env_steps": float64(res.EnvSteps), "shaped": boolFloat(res.Shaped)}}
	if _, err := streams.PublishEvent(ctx, x.js, done); err != nil {
		return res, err
	}
	return res, nil
}

// servedPlayer is the backend's player of version v for a plan that does
// not train π_B, or a rejection for one that does.
func (x *Explorer) servedPlayer(ctx context.Context, v int64, plan schemas.CyclePlan, model *prm.Model) (rollout.Player, error) {
	if model != nil && !(plan.Tilt > 0) {
		return nil, streams.Rejectf("the %s explorer trains π_B, which needs the built-in policy: an explorer playing through an inference server explores tilted (the learner's --explore-tilt) or frozen", plan.ModeOrDefault())
	}
	return x.cfg.Backend.Player(ctx, v)
}

// prm returns the model to score with, or nil when π_B is not trained.
func (x *Explorer) prm(ctx context.Context, plan schemas.CyclePlan) (*prm.Model, error) {
	switch plan.ModeOrDefault() {
	case schemas.ExplorerFrozen:
		return nil, nil
	case schemas.ExplorerRandomPRM:
		return prm.Random(x.cfg.RandomPRMSeed), nil
	}
	if plan.PRMVersion == 0 {
		return nil, streams.Rejectf("cycle plan names no PRM version for a prm-mode explorer")
	}
	m, err := prmsvc.Load(ctx, x.js, x.cfg.Run, plan.PRMVersion)
	if err != nil {
		return nil, fmt.Errorf("producers: PRM version %d: %w", plan.PRMVersion, err)
	}
	if plan.GateAUC > 0 && !m.ShapingEnabled(plan.GateAUC) {
		x.cfg.Logger.Info("PRM below the AUC gate: explorer stays a plain copy",
			"prm_version", m.Version, "auc", m.Info.HeldoutAUC, "gate", plan.GateAUC)
		return nil, nil
	}
	return m, nil
}

// cycleRun is the state of one shard's exploration.
type cycleRun struct {
	x    *Explorer
	env  envs.Env
	plan schemas.CyclePlan
	// trainer configures π_B's dense-reward updates (from the plan).
	trainer learner.Config
	cycle   int64
	// update is the learner's update counter when the cycle started.
	update int64
	model  *prm.Model
	// shard is the shard explored; lo and hi bound its tasks' indices in
	// the plan (plan.ShardTasks).
	shard, lo, hi int
	// tilt steers the rollouts at acting time (nil: π_B samples itself).
	tilt policy.ActionScorer
	// player plays the rollouts (nil: π_B itself, the built-in policy).
	player rollout.Player
	seq    uint64
	res    ExploreResult
}

func (c *cycleRun) explore(ctx context.Context, pB *policy.Policy) (ExploreResult, error) {
	if c.model != nil && c.plan.Tilt > 0 {
		return c.exploreTilted(ctx, pB)
	}
	if c.model != nil {
		c.res.Shaped, c.res.PRMVersion = true, c.model.Version
		tr, err := learner.New(pB, c.trainer)
		if err != nil {
			return c.res, err
		}
		// every shard trains π_B on every task, so all shards hold the
		// same π_B; each publishes only its own tasks' rollouts
		n := c.plan.GroupSize
		for u := 0; u < c.plan.Updates; u++ {
			trajs, err := c.rollouts(ctx, pB, fmt.Sprintf("c%d-u%d", c.cycle, u), n, 0, len(c.plan.Tasks))
			if err != nil {
				return c.res, err
			}
			stats, err := tr.Update(trajs, nil)
			if err != nil {
				return c.res, fmt.Errorf("producers: explorer update %d of cycle %d: %w", u, c.cycle, err)
			}
			if c.shard == 0 { // the other shards' figures of π_B's training are the same
				c.report(ctx, trajs, stats.Map(), u)
			}
			if c.plan.SwapAll {
				if err := c.publish(ctx, trajs[c.lo*n:c.hi*n]); err != nil {
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
		trajs, err := c.rollouts(ctx, pB, fmt.Sprintf("c%d-final", c.cycle), collect, c.lo, c.hi)
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
	tilt := prm.NewTiltScorer(ctx, c.model)
	c.tilt = tilt
	collect := c.plan.Collect
	if collect == 0 {
		collect = c.plan.GroupSize
	}
	trajs, err := c.rollouts(ctx, pB, fmt.Sprintf("c%d-tilt", c.cycle), collect, c.lo, c.hi)
	if err == nil {
		err = tilt.Err() // some states went untilted: not the rollouts asked for
	}
	if err != nil {
		return c.res, err
	}
	c.report(ctx, trajs, nil, 0)
	return c.res, c.publish(ctx, trajs)
}

// rollouts plays n episodes of each of the plan's tasks lo..hi-1 with π_B
// and labels each step with the PRM's dense reward (the label the swapper
// will replace). An episode's seed and id depend on its task's index in
// the plan, not on the range, so a shard's episodes are those the whole
// cycle would play; the id also carries the plan's nonce, the seed not.
func (c *cycleRun) rollouts(ctx context.Context, pB *policy.Policy, tag string, n, lo, hi int) ([]*schemas.Trajectory, error) {
	eps := make([]rollout.Episode, 0, (hi-lo)*n)
	for i := lo; i < hi; i++ {
		ref := c.plan.Tasks[i]
		for j := 0; j < n; j++ {
			seq := uint64(i*n + j)
			eps = append(eps, rollout.Episode{Task: rollout.TaskOf(ref), Opts: policy.RolloutOptions{
				Seed:   rollout.EpisodeSeed(c.plan.Seed, tag, i, j),
				ID:     c.plan.TrajectoryID(c.x.cfg.Run, tag, seq),
				Source: schemas.SourceExplore, Run: c.x.cfg.Run, Producer: c.x.cfg.Name,
				GroupID: tag + "/" + ref.ID, Cycle: c.cycle, Seq: seq,
				Tilt: c.tilt, TiltStrength: c.plan.Tilt,
			}})
		}
	}
	var pl rollout.Player = rollout.PolicyPlayer{Policy: pB}
	if c.player != nil {
		pl = c.player
	}
	trajs, err := rollout.All(ctx, c.env, pl, eps, c.x.cfg.Parallel)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, rollout.ErrUnavailable) {
			return nil, err
		}
		return nil, streams.Reject(err)
	}
	c.res.EnvSteps += rollout.EnvSteps(trajs)
	if err := c.score(ctx, trajs, tag); err != nil {
		return nil, err
	}
	return trajs, nil
}

// score writes the PRM's per-step rewards into DenseReward and Reward. A
// featurizer behind an inference server may fail (prm.ErrFeaturizer): the
// cycle then fails and is retried, never published with made-up scores.
func (c *cycleRun) score(ctx context.Context, trajs []*schemas.Trajectory, tag string) error {
	if c.model == nil {
		return nil
	}
	var opts []prm.ScoreOption
	if c.plan.PRMNoise > 0 {
		seed := uint64(rollout.EpisodeSeed(c.plan.Seed, tag, "noise"))
		opts = append(opts, prm.WithNoise(c.plan.PRMNoise, rand.New(rand.NewPCG(seed, 0x6e6f697365))))
	}
	all, err := c.model.ScoreBatchContext(ctx, trajs, opts...)
	if err != nil {
		return fmt.Errorf("producers: score explorer rollouts with the PRM: %w", err)
	}
	for k, scores := range all {
		for i := range trajs[k].Steps {
			trajs[k].Steps[i].DenseReward = scores[i]
			trajs[k].Steps[i].Reward = scores[i]
		}
	}
	return nil
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
	if c.plan.ShardCount() > 1 {
		values["shard"] = float64(c.shard)
	}
	values["success_rate"] = success / float64(max(1, len(trajs)))
	values["dense_return"] = dense / float64(max(1, len(trajs)))
	m := schemas.MetricsEvent{Run: c.x.cfg.Run, Component: "explorer", Time: time.Now().UTC(),
		Kind: "explore", Cycle: c.cycle, Update: c.update, Values: values,
		ID: fmt.Sprintf("explore/c%d/s%d/x%d", c.cycle, c.shard, u)}
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
