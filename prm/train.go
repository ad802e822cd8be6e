package prm

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/rspo-dev/rspo/schemas"
)

// MinTrajectories is the least Train accepts: enough for a held-out split.
const MinTrajectories = 5

// TrainReport is what Train measured. Held-out figures are computed with the
// returned (best-epoch) weights on trajectories never trained on.
type TrainReport struct {
	// Version is the trained model's version; FromVersion the warm start's
	// (absent for a fresh model).
	Version     int64 `json:"version"`
	FromVersion int64 `json:"from_version,omitempty"`
	WarmStart   bool  `json:"warm_start"`
	// Trajectories, Successes, Steps and UniqueSteps describe the data.
	Trajectories int `json:"trajectories"`
	Successes    int `json:"successes"`
	Steps        int `json:"steps"`
	UniqueSteps  int `json:"unique_steps"`
	// Train and Heldout are the split sizes.
	Train   int `json:"train"`
	Heldout int `json:"heldout"`
	// Weighting and the per-trajectory loss weights of each class (train set).
	Weighting     Weighting `json:"weighting"`
	SuccessWeight float64   `json:"success_weight"`
	FailureWeight float64   `json:"failure_weight"`
	// Target of the fit; with TargetStep the held-out figures score a
	// trajectory by its mean step score instead of the sum.
	Target Target `json:"target"`
	// Epochs run and the epoch whose weights were kept (1-based).
	Epochs    int `json:"epochs"`
	BestEpoch int `json:"best_epoch"`
	// TrainMSE is the unweighted MSE on the training split.
	TrainMSE float64 `json:"train_mse"`
	// HeldoutWeightedMSE is the early-stopping criterion (class-weighted).
	HeldoutWeightedMSE float64 `json:"heldout_weighted_mse"`
	// BaselineMSE is the held-out MSE of always predicting the training
	// split's mean outcome, for comparison with HeldoutEval.MSE.
	BaselineMSE float64 `json:"baseline_mse"`
	// HeldoutEval holds the held-out MSE, Spearman ρ(R̂, R) and AUC.
	HeldoutEval Evaluation `json:"heldout_eval"`
	// Seconds is the wall time of training.
	Seconds float64 `json:"seconds"`
}

// Metrics flattens the report's headline figures, e.g. for a prm.published
// event; train_seconds is the wall time of training, what a run's PRM
// warm-up and refreshes cost.
func (r TrainReport) Metrics() map[string]float64 {
	return map[string]float64{
		"heldout_auc":          r.HeldoutEval.AUC,
		"heldout_spearman":     r.HeldoutEval.Spearman,
		"heldout_mse":          r.HeldoutEval.MSE,
		"heldout":              float64(r.Heldout),
		"heldout_successes":    float64(r.HeldoutEval.Successes),
		"train_mse":            r.TrainMSE,
		"baseline_mse":         r.BaselineMSE,
		"trajectories":         float64(r.Trajectories),
		"successes":            float64(r.Successes),
		"mean_score_success":   r.HeldoutEval.MeanScoreSuccess,
		"mean_score_failure":   r.HeldoutEval.MeanScoreFailure,
		"epochs":               float64(r.Epochs),
		"heldout_weighted_mse": r.HeldoutWeightedMSE,
		"train_seconds":        r.Seconds,
	}
}

// Train fits a PRM to trajectories with outcomes: the head is trained on the
// class-weighted trajectory-level MSE (R̂_i − R_i)² (eq. 7; or per step
// with TargetStep) with Adam, on a
// stratified split, stopping early on the held-out loss. The featurizer
// stays frozen. With cfg.WarmStart the previous model's weights are the
// starting point (it is not modified).
//
// Errors: a *ConfigError (ErrInvalidConfig) for a bad config,
// ErrTooFewTrajectories, ErrInvalidTrajectory, ErrFeaturizer (a
// BatchFeaturizer failed), or ctx's error if it ends.
func Train(ctx context.Context, trajs []*schemas.Trajectory, cfg TrainConfig) (*Model, TrainReport, error) {
	ds, err := NewDataset(cfg)
	if err != nil {
		return nil, TrainReport{}, err
	}
	if err := ds.Add(ctx, trajs); err != nil {
		return nil, TrainReport{}, err
	}
	return ds.Train(ctx)
}

// Dataset is the training data of one PRM fit, built by Add in the order
// trajectories come, so a caller need not hold them all at once: each is
// featurized and only its feature rows are kept. Train on it fits the
// model Train would fit on the same trajectories in the same order.
type Dataset struct {
	cfg   TrainConfig
	m     *Model
	d     *dataset
	start time.Time
}

// NewDataset starts the data of a fit configured by cfg (its featurizer
// reads the steps). Errors: a *ConfigError (ErrInvalidConfig).
func NewDataset(cfg TrainConfig) (*Dataset, error) {
	start := time.Now()
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := initialModel(cfg)
	if err != nil {
		return nil, err
	}
	return &Dataset{cfg: cfg, m: m, d: newEmptyDataset(m.feat), start: start}, nil
}

// Add featurizes trajs after those added before. Errors:
// ErrInvalidTrajectory, ErrFeaturizer, or ctx's error.
func (ds *Dataset) Add(ctx context.Context, trajs []*schemas.Trajectory) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return ds.d.add(ctx, trajs)
}

// Len is the number of trajectories added.
func (ds *Dataset) Len() int { return len(ds.d.steps) }

// Train fits the model on every trajectory added (Train's fit). Errors:
// ErrTooFewTrajectories, ErrFeaturizer, or ctx's error.
func (ds *Dataset) Train(ctx context.Context) (*Model, TrainReport, error) {
	cfg, m := ds.cfg, ds.m
	if ds.Len() < MinTrajectories {
		return nil, TrainReport{}, fmt.Errorf("%w: %d, need at least %d", ErrTooFewTrajectories, ds.Len(), MinTrajectories)
	}
	if err := ds.d.finish(ctx); err != nil {
		return nil, TrainReport{}, err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5052_4d5f_7472_6e))
	trainIdx, heldIdx := holdoutSplit(ds.d.keys, ds.d.success, cfg.HoldoutFraction, cfg.Seed)
	tr := newTrainer(m, ds.d, cfg, trainIdx, heldIdx)
	if err := tr.fit(ctx, rng); err != nil {
		return nil, TrainReport{}, err
	}
	rep := tr.report(cfg)
	rep.Seconds = time.Since(ds.start).Seconds()
	m.Info = ModelInfo{
		Trained: true, TrainTrajectories: rep.Train, Heldout: rep.Heldout,
		HeldoutSuccesses: rep.HeldoutEval.Successes, HeldoutAUC: rep.HeldoutEval.AUC,
		HeldoutSpearman: rep.HeldoutEval.Spearman, HeldoutMSE: rep.HeldoutEval.MSE, Target: cfg.Target,
	}
	return m, rep, nil
}

func initialModel(cfg TrainConfig) (*Model, error) {
	var m *Model
	if cfg.WarmStart != nil {
		m = cfg.WarmStart.Clone()
	} else {
		var err error
		if m, err = New(cfg.Featurizer, ModelConfig{Hidden: cfg.Model.Hidden, Seed: cfg.Model.Seed ^ cfg.Seed}); err != nil {
			return nil, err
		}
	}
	m.Version = cfg.Version
	return m, nil
}

// classWeights returns per-trajectory weights for the members of idx: equal
// total weight per class under WeightBalanced (mean weight 1), else 1.
func classWeights(success []bool, idx []int, w Weighting) (succ, fail float64) {
	var ns float64
	for _, i := range idx {
		if success[i] {
			ns++
		}
	}
	n := float64(len(idx))
	if w != WeightBalanced || ns == 0 || ns == n {
		return 1, 1
	}
	return n / (2 * ns), n / (2 * (n - ns))
}
