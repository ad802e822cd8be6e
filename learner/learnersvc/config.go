package learnersvc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"time"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/learner"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// Config configures the learner service. Every field documents its default;
// Validate reports every problem at once.
type Config struct {
	// Run names the run. Required.
	Run string
	// Env and EnvOptions select the environment. Default "household".
	Env        string
	EnvOptions map[string]string

	// Trainer holds the objective's hyper-parameters (algorithm, α, ε, β,
	// learning rate, ...); see learner.Config for its defaults.
	Trainer learner.Config
	// Policy shapes π_θ at the start of a run; see policy.Config.
	Policy policy.Config
	// InitPolicy, when set, is the policy a new run starts from instead of
	// a fresh one of Policy: π_θ's version 0 and the reference policy of
	// the KL term (a warm start). A resumed run ignores it: its version 0
	// is stored.
	InitPolicy *policy.Policy `json:"-"`
	// TrainerMode says who applies the updates: TrainerBuiltin (the
	// default) trains π_θ in the learner; TrainerExternal publishes each
	// update's batch on rspo.<run>.batch and waits for a trainer's
	// policy.published of the next version (`rspo serve trainer`,
	// docs/protocol.md, "External trainers"), for as long as the trainer
	// takes.
	// External training needs grpo or gigpo.
	TrainerMode TrainerMode
	// TrainerLogEvery is how often the learner logs that it still waits
	// for an external trainer's version. Default 30s.
	TrainerLogEvery time.Duration

	// Updates is the number of learner updates in the run. Default 30.
	Updates int
	// Tasks is B, the tasks per update. Default 16.
	Tasks int
	// GroupSize is N, the rollouts per task. Default 8.
	GroupSize int
	// Seed makes the run reproducible. Default 1.
	Seed int64

	// RSPO turns on the explorer, the swap and the buffer. Off: the plain
	// base algorithm on (B·N) on-policy rollouts per update.
	RSPO bool
	// DenseOnly trains π_θ directly on the PRM's dense rewards (the
	// reward-hacking baseline). Excludes RSPO.
	DenseOnly bool
	// K is the number of learner updates per cycle, and the number of
	// dense-reward updates the explorer makes of π_B. Default 3.
	K int
	// Explore holds the explorer's settings (mode, tilt, noise, AUC gate,
	// verification, group size, collection, swap-all, shards), sent
	// unchanged with every cycle's plan; the learner also reads the mode to
	// know whether a PRM must exist. Zero fields take their declared
	// defaults (schemas.DefaultExploreSettings): the group size N/2 (at
	// least 2); Collect 0 only with ExploreCollectSet.
	Explore schemas.ExploreSettings
	// ExploreCollectSet marks Explore.Collect as set (so 0 can be asked for).
	ExploreCollectSet bool
	// OffTarget says which on-policy groups buffer records join: every
	// task's (OffTargetAll, the default) or only those whose rollouts all
	// failed, with α scaled by their share (OffTargetFailing).
	OffTarget OffTarget
	// ExploreTarget says which of a cycle's tasks the explorer explores:
	// all of them (ExploreTargetAll, the default) or those of the task
	// types that failed an on-policy group in the previous cycle, with the
	// same rollouts in all (ExploreTargetFailing).
	ExploreTarget ExploreTarget

	// PRM is the initial PRM (e.g. trained on other runs); nil with a PRM
	// needed means a warm-up: collect PRMWarmupTasks×GroupSize rollouts
	// with the initial policy and train on them.
	PRM *prm.Model `json:"-"`
	// PRMWarmupTasks is the number of tasks of the warm-up. Default 64.
	PRMWarmupTasks int
	// PRMRefresh retrains the PRM from the run's streams at every cycle end.
	// The learner is the one owner of refresh: each version it publishes is
	// the one the next cycle's plan names.
	PRMRefresh bool
	// PRMRefreshExtraRuns are other recorded runs (on the same server)
	// mixed into every refresh: outside knowledge. Needs PRMRefresh.
	PRMRefreshExtraRuns []string
	// PRMRefreshWindow is how many of the run's most recent trajectories a
	// refresh trains on. Default 8192; needs PRMRefresh.
	PRMRefreshWindow int
	// PRMRefreshEpochs is each refresh's epoch budget: a refresh continues
	// the current PRM for at most this many epochs on the window (early
	// stopping on the held-out loss still applies) and keeps its best
	// epoch (prmsvc.RefreshConfig.Epochs). 0 leaves PRMTrain.MaxEpochs
	// (default 500) in force, the unbounded refresh; rspo run's
	// --prm-refresh-epochs refuses 0 and defaults to
	// pipeline.DefaultPRMRefreshEpochs. Needs PRMRefresh.
	PRMRefreshEpochs int
	// PRMTrain configures PRM training (warm-up and refresh).
	PRMTrain prm.TrainConfig

	// EvalEvery evaluates π_θ every this many updates (and at the end).
	// Default 10; 0 keeps the default, a negative value only at the end.
	EvalEvery int
	// EvalEpisodes is the number of episodes per eval split, drawn to match
	// the split's task-type mix (the same sample at every evaluation of
	// the run). Default 64.
	EvalEpisodes int
	// EvalSplits are the splits evaluated. Default: every split but train.
	// "train" evaluates on EvalEpisodes held-out train tasks (a draw of
	// its own), for presets whose task mix differs from the eval splits'.
	EvalSplits []string
	// EvalGreedy evaluates with the most probable action instead of sampling.
	EvalGreedy bool
	// EvalShards is how many work items each evaluation of a split is
	// split into (schemas.EvalShard on rspo.<run>.work.eval), for the
	// run's actors to play. Default 1: the learner evaluates in-process.
	// At most EvalEpisodes; the figures do not depend on it.
	EvalShards int `json:",omitempty"`

	// MaxStaleness is S, how many policy versions an update's on-policy
	// rollouts may lag behind the policy the update trains. Default 0: the
	// synchronous loop, each update's rollouts asked of the version it
	// updates. With S ≥ 1 the learner asks for update u+S's rollouts (of
	// version u) before it applies update u, so actors play while it
	// trains; update u then trains on version max(0, u−S)'s rollouts with
	// the decoupled correction (learner.Config.Decoupled), and refuses
	// any on-policy trajectory more than S versions old. It changes what
	// is learned. At most KeepVersions−1 (the versions asked of must stay
	// stored). With TrainerExternal the batch's trainer settings carry
	// the correction (the reference trainer applies it).
	MaxStaleness int `json:",omitempty"`

	// ChunkTasks is the number of tasks per rollout request: smaller chunks
	// spread an update over more actors. Default 2.
	ChunkTasks int
	// RolloutTimeout bounds the wait for an update's on-policy rollouts.
	// Default 10 minutes.
	RolloutTimeout time.Duration
	// ExploreTimeout bounds the wait for a cycle's exploration and its
	// records in the buffer; past it the learner logs a warning and trains
	// with what the buffer holds. Default 10 minutes.
	ExploreTimeout time.Duration
	// RetryFor is how long the learner keeps redoing a step that failed for
	// a reason a retry may fix (bus, buffer or publish trouble) before the
	// run fails. Default 5 minutes.
	RetryFor time.Duration
	// LeaseTTL is how long the run's lease (lease.go) outlives this
	// learner's last heartbeat, which renews it every LeaseTTL/5: a second
	// learner of the run is refused within LeaseTTL/5, and a killed
	// learner's restart waits at most LeaseTTL. Default DefaultLeaseTTL
	// (5s); at least 500ms.
	LeaseTTL time.Duration `json:"-"`
	// KeepVersions is how many recent policy snapshots stay in the object
	// store (version 0, the reference policy, always stays). Default K+3.
	KeepVersions int
	// Parallel is how many evaluation episodes run at once. Default GOMAXPROCS.
	Parallel int
	// Logger receives the run's progress. Default slog.Default().
	Logger *slog.Logger `json:"-"`
	// EvalAgent, if set, returns the agent that plays an evaluation of
	// policy version v (p is the learner's policy of that version, greedy
	// is EvalGreedy): e.g. an llm.Agent playing v through an inference
	// server. An error fails the update, which is redone as RetryFor says.
	// Default: the built-in policy, policy.NewAgent(p, greedy).
	EvalAgent func(ctx context.Context, v int64, p *policy.Policy, greedy bool) (envs.Agent, error) `json:"-"`
}

// WithDefaults returns a copy with every zero field set to its default.
func (c Config) WithDefaults() Config {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	if c.Env == "" {
		c.Env = "household"
	}
	def(&c.Updates, 30)
	def(&c.Tasks, 16)
	def(&c.GroupSize, 8)
	def(&c.K, 3)
	c.Explore = c.exploreDefaults()
	def(&c.PRMWarmupTasks, 64)
	def(&c.EvalEvery, 10)
	def(&c.EvalEpisodes, 64)
	def(&c.EvalShards, 1)
	def(&c.ChunkTasks, 2)
	def(&c.KeepVersions, c.K+3)
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.RolloutTimeout == 0 {
		c.RolloutTimeout = 10 * time.Minute
	}
	if c.RetryFor == 0 {
		c.RetryFor = 5 * time.Minute
	}
	if c.ExploreTimeout == 0 {
		c.ExploreTimeout = 10 * time.Minute
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.TrainerMode == "" {
		c.TrainerMode = TrainerBuiltin
	}
	if c.TrainerLogEvery == 0 {
		c.TrainerLogEvery = 30 * time.Second
	}
	c.Trainer = c.Trainer.WithDefaults()
	if c.DenseOnly {
		c.Trainer.Rewards = learner.RewardDense
	}
	return c
}

// Validate reports every problem with the (defaulted) configuration.
func (c Config) Validate() error {
	c = c.WithDefaults()
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("learnersvc: "+format, args...)) }
	if err := streams.ValidateRun(c.Run); err != nil {
		errs = append(errs, err)
	}
	if env, err := envs.New(c.Env, c.EnvOptions); err != nil {
		errs = append(errs, err)
	} else {
		for _, sp := range c.EvalSplits {
			if !slices.Contains(env.Splits(), sp) {
				bad("eval split %q: %s has splits %v", sp, c.Env, env.Splits())
			}
		}
	}
	if c.Updates < 1 || c.Tasks < 1 || c.GroupSize < 1 || c.K < 1 {
		bad("updates %d, tasks %d, group size %d and k %d must all be ≥ 1", c.Updates, c.Tasks, c.GroupSize, c.K)
	}
	if c.RSPO && c.DenseOnly {
		bad("--dense-only trains on the PRM directly and excludes RSPO: set rspo=false")
	}
	if c.RSPO && c.onTasks() < 1 {
		bad("alpha %v leaves no on-policy task out of %d", c.Trainer.Alpha, c.Tasks)
	}
	if c.RSPO && c.offCount() < 1 {
		bad("alpha %v with %d tasks × %d rollouts asks for no buffer record; raise alpha or set rspo=false",
			c.Trainer.Alpha, c.Tasks, c.GroupSize)
	}
	if !c.ExploreTarget.Valid() {
		bad("explore target %q: want %s or %s", c.ExploreTarget, ExploreTargetAll, ExploreTargetFailing)
	}
	if !c.OffTarget.Valid() {
		bad("off target %q: want %s or %s", c.OffTarget, OffTargetAll, OffTargetFailing)
	}
	if !c.Explore.Mode.Valid() {
		bad("explorer mode %q: want prm, frozen or random-prm", c.Explore.Mode)
	}
	if err := c.explorePlanShape().ValidateExplorer(); err != nil {
		errs = append(errs, fmt.Errorf("learnersvc: explorer settings: %w", err))
	}
	if err := c.validateShards(); err != nil {
		errs = append(errs, err)
	}
	if err := c.validateEvalShards(); err != nil {
		errs = append(errs, err)
	}
	if c.Explore.Collect < 0 || (c.Explore.Collect == 0 && !c.Explore.SwapAll) {
		bad("explore collect %d: want ≥ 1, or 0 together with swap-all", c.Explore.Collect)
	}
	if c.EvalEpisodes < 1 || c.ChunkTasks < 1 || c.KeepVersions < 1 {
		bad("eval episodes %d, chunk tasks %d and keep versions %d must be ≥ 1", c.EvalEpisodes, c.ChunkTasks, c.KeepVersions)
	}
	if err := c.Trainer.Validate(); err != nil {
		errs = append(errs, err)
	}
	switch {
	case c.TrainerMode != TrainerBuiltin && c.TrainerMode != TrainerExternal:
		bad("trainer %q: want builtin or external", c.TrainerMode)
	case c.TrainerMode == TrainerExternal && c.Trainer.Algo == learner.PPO:
		bad("trainer external: ppo's advantages need V_old from the critic, which lives with π_θ's weights in the trainer; use --algo grpo or gigpo, or --trainer builtin")
	}
	switch {
	case c.MaxStaleness < 0:
		bad("max staleness %d: want 0 (synchronous) or more versions", c.MaxStaleness)
	case c.MaxStaleness >= c.KeepVersions:
		bad("max staleness %d: rollouts are asked of versions up to %d behind, and only %d snapshots are kept; raise keep-versions above it", c.MaxStaleness, c.MaxStaleness, c.KeepVersions)
	}
	if c.LeaseTTL != 0 && c.LeaseTTL < 500*time.Millisecond {
		bad("lease TTL %v: want at least 500ms (0: the default %v)", c.LeaseTTL, DefaultLeaseTTL)
	}
	if c.TrainerLogEvery < 0 {
		bad("trainer log interval %v is negative", c.TrainerLogEvery)
	}
	if err := c.Policy.Validate(); err != nil {
		errs = append(errs, err)
	}
	if !c.PRMRefresh && (len(c.PRMRefreshExtraRuns) > 0 || c.PRMRefreshWindow != 0 || c.PRMRefreshEpochs != 0) {
		bad("PRM refresh extra runs, window and epochs are only used with PRM refresh (--prm-refresh)")
	}
	if c.PRMRefreshEpochs < 0 {
		bad("PRM refresh epochs %d: want a positive epoch budget (0: the trainer's MaxEpochs)", c.PRMRefreshEpochs)
	}
	if c.PRMRefreshWindow < 0 {
		bad("PRM refresh window %d: want a positive number of trajectories", c.PRMRefreshWindow)
	}
	for _, r := range c.PRMRefreshExtraRuns {
		if err := streams.ValidateRun(r); err != nil {
			errs = append(errs, fmt.Errorf("learnersvc: PRM refresh extra run: %w", err))
		}
	}
	if t := c.PRMTrain.Target; t != "" && t != prm.TargetSum && t != prm.TargetStep {
		bad("PRM target %q: want %q or %q", t, prm.TargetSum, prm.TargetStep)
	}
	return errors.Join(errs...)
}

// exploreDefaults is Explore with every zero field that has a default
// set to it: the declared defaults of schemas.ExploreSettings, the group
// size derived from N.
func (c Config) exploreDefaults() schemas.ExploreSettings {
	e, d := c.Explore, schemas.DefaultExploreSettings()
	if e.GroupSize == 0 {
		e.GroupSize = max(2, c.GroupSize/2)
	}
	if e.Shards == 0 {
		e.Shards = d.Shards
	}
	if e.Mode == "" {
		e.Mode = d.Mode
	}
	if !c.ExploreCollectSet && e.Collect == 0 {
		e.Collect = d.Collect
	}
	return e
}

// onTasks is the number of on-policy tasks per update: (1−α)·B with RSPO.
func (c Config) onTasks() int {
	if !c.RSPO {
		return c.Tasks
	}
	return int(math.Round((1 - c.Trainer.Alpha) * float64(c.Tasks)))
}

// offCount is the number of buffer records per update: α·B·N with RSPO.
func (c Config) offCount() int {
	if !c.RSPO {
		return 0
	}
	return int(math.Round(c.Trainer.Alpha * float64(c.Tasks*c.GroupSize)))
}

// needsPRM says whether the run scores with a PRM.
func (c Config) needsPRM() bool {
	return c.DenseOnly || (c.RSPO && c.Explore.Mode == schemas.ExplorerPRM)
}

// explorePlanShape is the part of every cycle's plan the configuration
// decides: the explorer's settings, without the cycle's tasks, seed, PRM
// version or π_B's trainer.
func (c Config) explorePlanShape() schemas.CyclePlan {
	return schemas.CyclePlan{Env: c.Env, EnvOptions: c.EnvOptions, ExploreSettings: c.Explore, Updates: c.K}
}

// explorePlan is explorePlanShape with π_B's trainer: the learner's own
// settings in portable form (the explorer forces the dense reward).
func (c Config) explorePlan() (schemas.CyclePlan, error) {
	plan := c.explorePlanShape()
	raw, err := json.Marshal(c.Trainer.Portable())
	if err != nil {
		return plan, fmt.Errorf("learnersvc: explorer trainer settings: %w", err)
	}
	plan.Trainer = raw
	return plan, nil
}

// trainerConfig is the learner's trainer configuration: Trainer, with the
// decoupled correction of stale on-policy steps when updates are
// pipelined (MaxStaleness ≥ 1). π_B's trainer (the cycle plan's) is
// Trainer as given: the explorer's own rollouts are never stale.
func (c Config) trainerConfig() learner.Config {
	t := c.Trainer
	if c.MaxStaleness > 0 {
		t.Decoupled = true
	}
	return t
}
