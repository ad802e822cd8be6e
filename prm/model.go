package prm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/rspo-dev/rspo/schemas"
)

// ModelConfig shapes a new model. The zero value gives the defaults.
type ModelConfig struct {
	// Hidden is the width of the MLP's hidden layer. Default 16.
	Hidden int
	// Seed fixes the initial weights; 0 is a valid seed.
	Seed uint64
}

// MaxHidden bounds the hidden width (and what a snapshot may claim).
const MaxHidden = 4096

func (c ModelConfig) withDefaults() ModelConfig {
	if c.Hidden == 0 {
		c.Hidden = 16
	}
	return c
}

// Validate reports every problem with the (defaulted) configuration.
func (c ModelConfig) Validate() error {
	if c.Hidden < 1 || c.Hidden > MaxHidden {
		return &ConfigError{Field: "Hidden", Reason: fmt.Sprintf("%d not in 1..%d", c.Hidden, MaxHidden)}
	}
	return nil
}

// ModelInfo records how a model was obtained and how informative it was on
// held-out trajectories when trained. The explorer's Gate reads it.
type ModelInfo struct {
	// Trained is false for the untrained (random) control.
	Trained bool `json:"trained"`
	// TrainTrajectories and Heldout count the trajectories used.
	TrainTrajectories int `json:"train_trajectories,omitempty"`
	Heldout           int `json:"heldout,omitempty"`
	// HeldoutSuccesses counts successes among the held-out trajectories;
	// AUC is only meaningful when it is neither 0 nor Heldout.
	HeldoutSuccesses int `json:"heldout_successes,omitempty"`
	// HeldoutAUC is the AUC of R̂ for success vs failure (0.5 when undefined).
	HeldoutAUC float64 `json:"heldout_auc,omitempty"`
	// HeldoutSpearman is the rank correlation of R̂ with R (0 when undefined).
	HeldoutSpearman float64 `json:"heldout_spearman,omitempty"`
	// HeldoutMSE is the unweighted mean of (R̂ − R)² on held-out trajectories.
	HeldoutMSE float64 `json:"heldout_mse,omitempty"`
	// Target is what the step scores were fitted to (empty: TargetSum).
	Target Target `json:"target,omitempty"`
}

// Model is the PRM: a frozen featurizer and a two-layer MLP head,
// r̂_t = tanh(w2·tanh(W1 h_t + b1) + b2). A Model is immutable once built
// and safe for concurrent scoring.
type Model struct {
	// Version is the model's version; Train sets it (a warm start counts up).
	Version int64
	// Info describes training and held-out quality.
	Info ModelInfo

	feat   Featurizer
	dim    int
	hidden int
	// params holds W1 (hidden×dim, row-major), b1 (hidden), w2 (hidden), b2.
	params []float64
}

// New builds a model with freshly initialised weights over the featurizer.
func New(feat Featurizer, cfg ModelConfig) (*Model, error) {
	if feat == nil {
		return nil, &ConfigError{Field: "Featurizer", Reason: "nil"}
	}
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := newZero(feat, cfg.Hidden)
	m.initWeights(cfg.Seed)
	return m, nil
}

// Random returns the untrained PRM of the default featurizer and shape, the
// explicit control mode: its scores carry no information about outcomes.
func Random(seed uint64) *Model {
	m, err := New(DefaultFeaturizer(), ModelConfig{Seed: seed})
	if err != nil {
		panic(err) // the defaults are valid
	}
	return m
}

func newZero(feat Featurizer, hidden int) *Model {
	dim := feat.Dim()
	return &Model{feat: feat, dim: dim, hidden: hidden, params: make([]float64, hidden*dim+2*hidden+1)}
}

// initWeights draws W1 ~ N(0, 1) (features have unit norm, so hidden
// pre-activations start near unit variance) and w2 ~ N(0, 1/hidden).
func (m *Model) initWeights(seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x5052_4d5f_696e_6974))
	w1, _, w2, _ := m.views()
	for i := range w1 {
		w1[i] = rng.NormFloat64()
	}
	s := 1 / math.Sqrt(float64(m.hidden))
	for i := range w2 {
		w2[i] = s * rng.NormFloat64()
	}
}

// views slices params into the layers.
func (m *Model) views() (w1, b1, w2 []float64, b2 *float64) {
	hd := m.hidden * m.dim
	p := m.params
	return p[:hd], p[hd : hd+m.hidden], p[hd+m.hidden : hd+2*m.hidden], &p[len(p)-1]
}

// Featurizer returns the model's frozen featurizer.
func (m *Model) Featurizer() Featurizer { return m.feat }

// Hidden returns the hidden-layer width.
func (m *Model) Hidden() int { return m.hidden }

// NumParams returns the number of trainable parameters.
func (m *Model) NumParams() int { return len(m.params) }

// Clone returns a deep copy (the featurizer, being frozen, is shared).
func (m *Model) Clone() *Model {
	c := *m
	c.params = append([]float64(nil), m.params...)
	return &c
}

// ScoreOption is a per-call scoring knob.
type ScoreOption func(*scoreOptions)

type scoreOptions struct {
	sigma float64
	rng   *rand.Rand
}

// WithNoise adds independent Gaussian noise N(0, σ²) to every step score,
// drawn from rng (the paper's robustness ablation). σ ≤ 0 or a nil rng adds
// nothing. rng is not safe for concurrent use; give each goroutine its own.
func WithNoise(sigma float64, rng *rand.Rand) ScoreOption {
	return func(o *scoreOptions) { o.sigma, o.rng = sigma, rng }
}

// ScoreSteps returns r̂_t for every step of t, featurizing and evaluating
// the steps in batches. When a BatchFeaturizer fails, every score is NaN;
// ScoreBatchContext returns the error instead.
func (m *Model) ScoreSteps(t *schemas.Trajectory, opts ...ScoreOption) []float64 {
	return m.ScoreBatch([]*schemas.Trajectory{t}, opts...)[0]
}

// ScoreActions writes r̂(s, a) for every candidate action a of one state
// into dst: the per-step score the step would get if a were taken. It is
// what lets a policy be steered by the PRM at acting time
// (policy.RolloutOptions.Tilt); it is safe for concurrent use. The actions
// are featurized in one call. When a BatchFeaturizer fails, dst is filled
// with NaN, which the tilt leaves untilted; ScoreActionsContext and
// TiltScorer report the error.
func (m *Model) ScoreActions(instruction, observation string, actions []string, dst []float64) {
	if err := m.ScoreActionsContext(context.Background(), instruction, observation, actions, dst); err != nil {
		fillNaN(dst[:len(actions)])
	}
}

// TrajectoryScore is the score that ranks whole trajectories: R̂ = Σ_t r̂_t,
// or for a step-target model (Info.Target == TargetStep), whose every step
// estimates the outcome, the mean of r̂_t — its sum grows with the length
// of an episode, not with its chance of success.
func (m *Model) TrajectoryScore(t *schemas.Trajectory) float64 {
	return m.trajectoryTotal(m.ScoreSteps(t))
}

// trajectoryTotal is TrajectoryScore of a trajectory with step scores r.
func (m *Model) trajectoryTotal(r []float64) float64 {
	s := sum(r)
	if m.Info.Target == TargetStep && len(r) > 0 {
		s /= float64(len(r))
	}
	return s
}

// Score returns R̂ = Σ_t r̂_t for t.
func (m *Model) Score(t *schemas.Trajectory, opts ...ScoreOption) float64 {
	return sum(m.ScoreSteps(t, opts...))
}

func sum(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s
}

// ScoreBatch scores the steps of several trajectories; result i holds r̂_t
// for trajectory i. The steps are featurized and evaluated scoreChunkRows
// at a time, so a large batch needs a few MiB of scratch, not its
// features' worth; the scores do not depend on the chunking. When a
// BatchFeaturizer fails, every score is NaN; ScoreBatchContext returns the
// error instead.
func (m *Model) ScoreBatch(ts []*schemas.Trajectory, opts ...ScoreOption) [][]float64 {
	flat, out := batchOut(ts)
	if err := m.scoreRows(flat, textRows(context.Background(), stepTexts(ts))); err != nil {
		fillNaN(flat)
		return out
	}
	applyNoise(flat, opts)
	return out
}

// batchOut allocates the scores of ts's steps: flat, and cut per trajectory.
func batchOut(ts []*schemas.Trajectory) (flat []float64, out [][]float64) {
	n := 0
	for _, t := range ts {
		n += len(t.Steps)
	}
	flat = make([]float64, n)
	out = make([][]float64, len(ts))
	off := 0
	for i, t := range ts {
		out[i] = flat[off : off+len(t.Steps) : off+len(t.Steps)]
		off += len(t.Steps)
	}
	return flat, out
}

// rowSource writes the features of rows lo..lo+n−1 into x.
type rowSource func(m *Model, x []float32, lo, n int) error

// scoreChunkRows is how many rows scoreRows featurizes and evaluates at
// once (about 3 MiB of scratch with the default 256 features).
const scoreChunkRows = 1024

// scoreRows writes r̂ of len(out) rows into out, their features coming
// from next chunk by chunk; it stops at next's first error.
func (m *Model) scoreRows(out []float64, next rowSource) error {
	var x []float32
	var x64, hid []float64
	for lo := 0; lo < len(out); {
		hi := chunkEnd(lo, len(out), m.hidden)
		n := hi - lo
		x = slices.Grow(x[:0], n*m.dim)[:n*m.dim]
		if err := next(m, x, lo, n); err != nil {
			return err
		}
		x64 = toFloat64(x64, x)
		hid = grow(hid, n*m.hidden)
		m.forwardRows(x64, n, hid, out[lo:hi])
		lo = hi
	}
	return nil
}

// chunkEnd is the end of the chunk of n rows that starts at row lo. Gonum's
// Gemm sums each entry of a small product (fewer than four 64×64 blocks)
// in one pass and of a larger one in 64-long pieces, so a row's score
// depends on which kind of product it is part of: every chunk is of the
// kind the whole batch would be, and the scores of a batch do not depend
// on the chunking.
func chunkEnd(lo, n, hidden int) int {
	hi := min(n, lo+scoreChunkRows)
	if hi < n && gemmBlocked(n, hidden) && !gemmBlocked(n-hi, hidden) {
		hi = n // the rest is too small to be blocked: it joins this chunk
	}
	return hi
}

// gemmBlocked reports whether gonum computes a rows×cols product block by
// block (its dgemmParallel with blockSize 64 and minParBlock 4).
func gemmBlocked(rows, cols int) bool {
	blocks := func(k int) int { return (k + 63) / 64 }
	return blocks(rows)*blocks(cols) >= 4
}

func applyNoise(scores []float64, opts []ScoreOption) {
	var o scoreOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.sigma <= 0 || o.rng == nil {
		return
	}
	for i := range scores {
		scores[i] += o.sigma * o.rng.NormFloat64()
	}
}

// errNilModel is returned by helpers handed a nil model.
var errNilModel = errors.New("prm: nil model")
