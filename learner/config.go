package learner

import (
	"errors"
	"fmt"
	"math"
)

// Algo names the base algorithm RSPO wraps.
type Algo string

// The base algorithms.
const (
	// GRPO: group-normalised outcome, the same advantage at every step.
	GRPO Algo = "grpo"
	// PPO: a critic (the policy's value head) and GAE over turns.
	PPO Algo = "ppo"
	// GiGPO: GRPO's episode advantage plus a step advantage normalised among
	// steps of the group that share a state key.
	GiGPO Algo = "gigpo"
)

// RewardSource says which per-step reward label the trainer learns from.
type RewardSource string

// The reward sources.
const (
	// RewardOutcome reads Step.Reward, the environment's reward (the outcome
	// on the last step). Explorer trajectories must have been swapped.
	RewardOutcome RewardSource = "outcome"
	// RewardDense reads Step.DenseReward, the PRM's per-step score (the
	// explorer's own training, and the dense-only baseline).
	RewardDense RewardSource = "dense"
)

// Fallback says how an off-policy trajectory is normalised when no
// on-policy group of its task is in the batch.
type Fallback string

// The fallbacks.
const (
	// FallbackBatch normalises it together with all on-policy returns of
	// the batch, so a swapped-in success still counts against the batch's
	// failures; with no on-policy data at all, a task's off-policy
	// trajectories are normalised among themselves.
	FallbackBatch Fallback = "batch"
	// FallbackDrop gives it advantage 0: only its KL term remains.
	FallbackDrop Fallback = "drop"
)

// OffRatio says which probability the off-policy term's ratio is taken
// against.
type OffRatio string

// The off-policy ratios.
const (
	// OffRatioBehaviour is eq. 4: r = π_θ/π_B, clipped around
	// c = π_old/π_B. A buffer step whose action π_B made much likelier
	// than π_θ does gets a gradient weight of about π_old/π_B ≪ 1.
	OffRatioBehaviour OffRatio = "behaviour"
	// OffRatioOld ignores π_B: r = π_θ/π_old clipped around 1, as if
	// π_θ had produced the buffer trajectory. Biased (not an importance-
	// sampled estimate), it learns from a swapped-in success at full
	// weight however unlikely its actions were under π_θ — self-imitation
	// of the explorer's successes, with the PPO clip as the trust region.
	OffRatioOld OffRatio = "old"
)

// OffCredit says which steps of a buffer trajectory its advantage is
// given to.
type OffCredit string

// The off-policy credit rules.
const (
	// OffCreditEpisode gives every step the trajectory's advantage, as
	// the paper does.
	OffCreditEpisode OffCredit = "episode"
	// OffCreditNoLoops gives no positive advantage to the steps of a loop
	// (see loopSteps): the buffer replays mostly successes, so without it
	// every action of a success is reinforced, the detours that came back
	// to where they started included (re-clicking a selected option,
	// taking an object and putting it back). A loop in a failure keeps
	// its negative advantage.
	OffCreditNoLoops OffCredit = "no-loops"
)

// Config holds the learner's hyper-parameters. Zero fields take the
// defaults listed; Validate reports every invalid field.
type Config struct {
	// Algo is the base algorithm. Default GRPO.
	Algo Algo
	// Rewards is the reward source. Default RewardOutcome.
	Rewards RewardSource
	// Alpha weighs the off-policy term (eq. 1). Default 1/8. It only matters
	// when both on- and off-policy data are present.
	Alpha float64
	// EpsOn is the on-policy clip ε. Default 0.2.
	EpsOn float64
	// EpsOff is the off-policy clip ε around c = π_old/π_B. Default 0.1.
	EpsOff float64
	// OffRatio selects the off-policy ratio. Default OffRatioBehaviour.
	OffRatio OffRatio
	// OffCredit selects which steps of an off-policy sample get its
	// advantage. Default OffCreditEpisode.
	OffCredit OffCredit
	// Beta weighs KL(π_θ‖π_ref). Default 0.01; NoKL turns it off.
	Beta float64
	// EntropyCoef weighs an entropy bonus. Default 0.
	EntropyCoef float64
	// Epochs is the number of passes over a batch per update. Default 1
	// (with one epoch and one minibatch the clip never binds).
	Epochs int
	// MiniBatches splits each epoch into this many optimiser steps.
	// Default 1.
	MiniBatches int
	// MinGroupStd: a group whose returns have a smaller standard deviation
	// gets zero advantages (for PPO: a batch whose advantages do), so a
	// near-constant reward is not blown up into unit-size noise. Default 0
	// (off): with a flat PRM it freezes the explorer.
	MinGroupStd float64
	// AdvEps is δ in A = (R − mean)/(std + δ). Default 1e-6.
	AdvEps float64
	// LR is Adam's learning rate. Default 0.03.
	LR float64
	// MaxGradNorm clips the gradient's norm; NoClip turns clipping off.
	// Default 1.
	MaxGradNorm float64
	// Gamma is the discount over turns (PPO's GAE, GiGPO's step returns).
	// Default 0.95 for GiGPO and 1 for PPO. Set a value in (0, 1].
	Gamma float64
	// Lambda is GAE's λ. Default 0.95.
	Lambda float64
	// ValueCoef weighs PPO's value loss ½(V − R)². Default 0.5.
	ValueCoef float64
	// KeepRawAdvantages turns off PPO's advantage whitening (by default
	// PPO's advantages are normalised over the batch's on-policy steps).
	KeepRawAdvantages bool
	// StepWeight ω weighs GiGPO's step advantage. Default 1.
	StepWeight float64
	// OffPolicyFallback says how to normalise a buffer trajectory whose task
	// has no on-policy group in the batch. Default FallbackBatch.
	OffPolicyFallback Fallback
	// Swap configures the optional cross-turn "second reading" term (see
	// SwapConfig); off by default.
	Swap SwapConfig
	// Seed drives minibatch shuffling and swap partners. Default 1.
	Seed int64
	// Decoupled corrects on-policy steps that a policy version older than
	// the trained one produced (Trajectory.PolicyVersion below the policy's
	// version at the update: rollouts of a pipelined learner, see
	// learnersvc.Config.MaxStaleness) with decoupled PPO: the update
	// computes log π_prox, the policy as it is before the update, for
	// those steps and optimises (π_prox/π_behav)·min(r·A, clip(r, 1−ε,
	// 1+ε)·A) with r = π_θ/π_prox (see stepLoss). Steps of the trained
	// version follow the plain objective bit for bit. Default off: π_old
	// of every on-policy step is its behaviour log-prob, so a stale
	// step's clip is centred on the stale policy.
	Decoupled bool `json:",omitempty"`
	// Workers is how many goroutines share an update's featurising and
	// forward/backward passes. Default 1. Results are deterministic for a
	// given Workers; different counts sum gradients in a different order
	// (differences of rounding only).
	Workers int
}

// Sentinel values for fields whose zero means "default".
const (
	// NoKL turns the KL penalty off (Beta = NoKL).
	NoKL = -1.0
	// NoClip turns gradient-norm clipping off (MaxGradNorm = NoClip).
	NoClip = -1.0
)

// WithDefaults returns a copy of c with zero fields set to their defaults
// and the sentinels resolved.
func (c Config) WithDefaults() Config {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	if c.Algo == "" {
		c.Algo = GRPO
	}
	if c.Rewards == "" {
		c.Rewards = RewardOutcome
	}
	if c.OffPolicyFallback == "" {
		c.OffPolicyFallback = FallbackBatch
	}
	if c.OffRatio == "" {
		c.OffRatio = OffRatioBehaviour
	}
	if c.OffCredit == "" {
		c.OffCredit = OffCreditEpisode
	}
	def(&c.Alpha, 1.0/8)
	def(&c.EpsOn, 0.2)
	def(&c.EpsOff, 0.1)
	def(&c.Beta, 0.01)
	if c.Beta == NoKL {
		c.Beta = 0
	}
	def(&c.AdvEps, 1e-6)
	def(&c.LR, 0.03)
	def(&c.MaxGradNorm, 1)
	if c.MaxGradNorm == NoClip {
		c.MaxGradNorm = 0
	}
	if c.Algo == PPO {
		def(&c.Gamma, 1)
	}
	def(&c.Gamma, 0.95)
	def(&c.Lambda, 0.95)
	def(&c.ValueCoef, 0.5)
	def(&c.StepWeight, 1)
	if c.Epochs == 0 {
		c.Epochs = 1
	}
	if c.MiniBatches == 0 {
		c.MiniBatches = 1
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Workers == 0 {
		c.Workers = 1
	}
	c.Swap = c.Swap.withDefaults()
	return c
}

// Portable returns c with every default filled in and the sentinels kept
// (a Beta resolved to 0 is NoKL again, a MaxGradNorm of 0 NoClip), so that
// WithDefaults of the result equals WithDefaults of c: the form in which a
// configuration travels to another process (the explorer trains π_B with
// the learner's settings) without a resolved sentinel turning back into a
// default on the other side.
func (c Config) Portable() Config {
	c = c.WithDefaults()
	if c.Beta == 0 {
		c.Beta = NoKL
	}
	if c.MaxGradNorm == 0 {
		c.MaxGradNorm = NoClip
	}
	return c
}

// Validate reports every invalid field (after defaults) joined with
// errors.Join; each is a ConfigError.
func (c Config) Validate() error {
	c = c.WithDefaults()
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &ConfigError{Field: field, Reason: fmt.Sprintf(format, args...)})
	}
	in := func(v, lo, hi float64) bool { return v >= lo && v <= hi && !math.IsNaN(v) }
	if c.Algo != GRPO && c.Algo != PPO && c.Algo != GiGPO {
		bad("Algo", "%q is not grpo, ppo or gigpo", c.Algo)
	}
	if c.Rewards != RewardOutcome && c.Rewards != RewardDense {
		bad("Rewards", "%q is not outcome or dense", c.Rewards)
	}
	if c.OffPolicyFallback != FallbackBatch && c.OffPolicyFallback != FallbackDrop {
		bad("OffPolicyFallback", "%q is not batch or drop", c.OffPolicyFallback)
	}
	if c.OffRatio != OffRatioBehaviour && c.OffRatio != OffRatioOld {
		bad("OffRatio", "%q is not behaviour or old", c.OffRatio)
	}
	if c.OffCredit != OffCreditEpisode && c.OffCredit != OffCreditNoLoops {
		bad("OffCredit", "%q is not episode or no-loops", c.OffCredit)
	}
	if !in(c.Alpha, 0, 1) || c.Alpha == 1 {
		bad("Alpha", "%v not in (0, 1)", c.Alpha)
	}
	if !in(c.EpsOn, 1e-6, 10) {
		bad("EpsOn", "%v not in (0, 10]", c.EpsOn)
	}
	if !in(c.EpsOff, 1e-6, 10) {
		bad("EpsOff", "%v not in (0, 10]", c.EpsOff)
	}
	if !in(c.Beta, 0, 100) {
		bad("Beta", "%v not in [0, 100] (NoKL for none)", c.Beta)
	}
	if !in(c.EntropyCoef, 0, 100) {
		bad("EntropyCoef", "%v not in [0, 100]", c.EntropyCoef)
	}
	if c.Epochs < 1 || c.Epochs > 100 {
		bad("Epochs", "%d not in 1..100", c.Epochs)
	}
	if c.MiniBatches < 1 || c.MiniBatches > 1024 {
		bad("MiniBatches", "%d not in 1..1024", c.MiniBatches)
	}
	if !in(c.MinGroupStd, 0, 1e6) {
		bad("MinGroupStd", "%v not in [0, 1e6]", c.MinGroupStd)
	}
	if !in(c.AdvEps, 1e-12, 1) {
		bad("AdvEps", "%v not in (0, 1]", c.AdvEps)
	}
	if !in(c.LR, 1e-9, 10) {
		bad("LR", "%v not in (0, 10]", c.LR)
	}
	if !in(c.MaxGradNorm, 0, 1e9) {
		bad("MaxGradNorm", "%v negative (NoClip for none)", c.MaxGradNorm)
	}
	if !in(c.Gamma, 1e-9, 1) {
		bad("Gamma", "%v not in (0, 1]", c.Gamma)
	}
	if !in(c.Lambda, 0, 1) {
		bad("Lambda", "%v not in [0, 1]", c.Lambda)
	}
	if !in(c.ValueCoef, 0, 1e3) {
		bad("ValueCoef", "%v not in [0, 1000]", c.ValueCoef)
	}
	if !in(c.StepWeight, 0, 1e3) {
		bad("StepWeight", "%v not in [0, 1000]", c.StepWeight)
	}
	if c.Workers < 1 || c.Workers > 256 {
		bad("Workers", "%d not in 1..256", c.Workers)
	}
	errs = append(errs, c.Swap.validate())
	return errors.Join(errs...)
}
