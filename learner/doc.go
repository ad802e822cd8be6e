// Package learner turns scored trajectories into policy updates: advantages
// (GRPO, PPO with GAE, GiGPO), the RSPO objective with generalized clipping
// for off-policy (replay buffer) data, and a Trainer that applies one update
// per batch.
//
// The objective follows docs/algorithm.md eq. 1, 3 and 4:
//
//	J_total = (1-α)·J_on + α·J_off
//	J_on    = mean_{i,t} min(r·A, clip(r, 1-ε_on, 1+ε_on)·A) − β·KL(π_θ‖π_ref),   r = π_θ/π_old
//	J_off   = mean_{i,t} min(r·A, clip(r, c-ε_off, c+ε_off)·A) − β·KL(π_θ‖π_ref), r = π_θ/π_B, c = π_old/π_B
//
// computed in log space (differences of log-probabilities, then exp; no
// division by a probability). π_old for on-policy steps is the behaviour
// log-prob the actor recorded; for off-policy steps it is the trainer's
// policy at the start of the update. With no off-policy data the objective
// is exactly the base algorithm's.
//
// Rollouts of an older policy version than the trained one (a pipelined
// learner's, learnersvc.Config.MaxStaleness) are on-policy data gone
// stale: with Config.Decoupled their steps take decoupled PPO's form
//
//	J_stale = mean_{i,t} w·min(r·A, clip(r, 1-ε_on, 1+ε_on)·A),   r = π_θ/π_prox, w = π_prox/π_behav
//
// where π_prox is the policy at the start of the update (computed like
// the off-policy π_old) and π_behav the stale version that played: w
// corrects the sampling distribution, and the trust region stays around
// the policy being updated. Against π_behav it is the generalized clip of
// J_off with the clip range scaled by w (c·(1±ε) instead of c±ε); see
// decoupledSurrogate. Steps of the trained version keep the J_on above bit
// for bit.
//
// Config.OffRatio can take the off-policy ratio against π_old instead of
// π_B (OffRatioOld: r = π_θ/π_old clipped around 1). That is not an
// importance-sampled estimate; it learns from a buffer success at full
// weight even where π_B made its actions far likelier than π_θ does —
// under eq. 4 exactly those steps get weight π_θ/π_B ≪ 1.
//
// Config.OffCredit chooses which steps of an off-policy sample get its
// advantage: every step (OffCreditEpisode, the paper's), or every step but
// those of a loop (OffCreditNoLoops: a step taken from a state the
// trajectory comes back to later gets no positive advantage). The buffer
// replays mostly successes, so under the paper's rule every action of a
// success is reinforced each time it is replayed, the detours included.
//
// Rewards come from Step.Reward (outcome) or Step.DenseReward (the PRM's
// scores, for the explorer and the dense-only baseline); see RewardSource.
// The optional cross-turn "second reading" of the swap (docs/algorithm.md,
// "Optional swap term") is a separately named term (SwapConfig), off by
// default. MarshalState and RestoreState let a
// restarted learner continue exactly: optimiser moments, reference policy
// and shuffling source travel with the policy snapshot.
//
// An update is two halves, Trainer.Assemble (featurise, group, advantages,
// swap coefficients: nothing that needs π_θ's weights) and Trainer.Apply
// (the π_old and π_ref passes and the optimisation); Update is both. A
// GRPO or GiGPO Batch travels to a trainer elsewhere with Batch.Export
// (schemas.TrainBatch) and comes back into one with Trainer.Import, which
// applies it bit for bit as the assembling trainer would have.
//
// The package is pure: it knows nothing about NATS. The learner service,
// the explorer (training its copy on dense rewards) and the experiments all
// drive the same Trainer.
package learner
