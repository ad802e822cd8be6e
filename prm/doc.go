// Package prm is RSPO's dense process reward model (docs/algorithm.md eq. 5–7): a
// frozen featurizer turns each step's (instruction, observation, action)
// into features h_t, a two-layer MLP with a tanh output maps them to a
// per-step reward r̂_t ∈ (−1, 1), and the trajectory score is R̂ = Σ_t r̂_t.
// Only R̂ is supervised, against the environment's outcome reward. With
// TrainConfig.Target = TargetStep every r̂_t is fitted to the outcome
// instead, so r̂(s, a) estimates the chance of success after a in s — an
// action value that Model.ScoreActions hands to a tilted explorer.
//
// The package is a pure core: it knows trajectories (package schemas) but
// nothing of NATS. The scoring service, publishing to the object store and
// training from a run's recorded streams live in prm/prmsvc; files of
// trajectories for offline training in prm/trajfile; synthetic test
// trajectories in prm/prmtest.
//
// The pieces:
//
//   - Featurizer is the frozen feature map; HashProjection (hashed words,
//     n-grams and action×instruction crosses through a fixed, seeded random
//     projection) is the default. Another featurizer plugs in by
//     implementing the interface and, to be snapshotted, RegisterFeaturizer.
//     A BatchFeaturizer (e.g. package llm's embeddings featurizer, an
//     embedding model behind an inference server) is handed whole chunks of
//     steps and may fail: the Context variants (ScoreBatchContext,
//     ScoreActionsContext, EvaluateContext) and Train return its error
//     (ErrFeaturizer), the error-less ones score NaN, and TiltScorer keeps a
//     tilted rollout's failures for the caller to check.
//   - Model scores steps in batches (ScoreSteps, Score), optionally with
//     Gaussian noise (WithNoise, the paper's robustness ablation). Random
//     builds the untrained control.
//   - Train fits a model with Adam on the trajectory-level MSE, weighting
//     successes and failures comparably, with a held-out split and early
//     stopping; it reports held-out MSE, Spearman ρ of R̂ vs R and the AUC of
//     R̂ for success vs failure. A previous model can be warm-started.
//   - EncodeSnapshot/DecodeSnapshot give a versioned binary snapshot with a
//     magic number and a checksum.
//   - Gate tells an explorer whether dense shaping is worth using given a
//     model's held-out AUC.
package prm
