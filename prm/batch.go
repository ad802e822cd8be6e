package prm

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/rspo-dev/rspo/schemas"
)

// StepText is the text of one step, what a featurizer maps to h_t.
type StepText struct {
	Instruction, Observation, Action string
}

// BatchFeaturizer is a Featurizer whose features come from elsewhere, e.g.
// an embedding model behind an inference server: it featurizes many steps
// per call and can fail. Every path of this package that featurizes —
// training's dataset, ScoreBatchContext, ScoreActionsContext,
// EvaluateContext, and the error-less ScoreSteps, ScoreBatch and
// ScoreActions — hands it whole chunks of steps (up to 1024 at a time)
// through FeaturesBatch rather than calling Features step by step.
//
// Its Features, which cannot return an error, must fill dst with NaN when
// the features cannot be had, so that a failure shows as NaN scores and
// never as plausible numbers.
type BatchFeaturizer interface {
	Featurizer
	// FeaturesBatch writes the features of steps[i] into
	// dst[i*Dim():(i+1)*Dim()]; dst has len(steps)*Dim() entries. On error
	// the contents of dst are unspecified.
	FeaturesBatch(ctx context.Context, steps []StepText, dst []float32) error
}

// featurize writes the features of steps into dst: one FeaturesBatch call
// for a BatchFeaturizer (its error wrapped in ErrFeaturizer), else Features
// step by step, which cannot fail.
func featurize(ctx context.Context, feat Featurizer, steps []StepText, dst []float32) error {
	if bf, ok := feat.(BatchFeaturizer); ok {
		if err := bf.FeaturesBatch(ctx, steps, dst); err != nil {
			return fmt.Errorf("%w: %w", ErrFeaturizer, err)
		}
		return nil
	}
	d := feat.Dim()
	for i, s := range steps {
		feat.Features(s.Instruction, s.Observation, s.Action, dst[i*d:(i+1)*d])
	}
	return nil
}

// stepTexts lists the steps of ts in order.
func stepTexts(ts []*schemas.Trajectory) []StepText {
	n := 0
	for _, t := range ts {
		n += len(t.Steps)
	}
	out := make([]StepText, 0, n)
	for _, t := range ts {
		for k := range t.Steps {
			out = append(out, StepText{t.Instruction, t.Steps[k].Observation, t.Steps[k].Action})
		}
	}
	return out
}

// textRows returns a scoreRows source featurizing steps.
func textRows(ctx context.Context, steps []StepText) rowSource {
	return func(m *Model, x []float32, lo, n int) error {
		return featurize(ctx, m.feat, steps[lo:lo+n], x)
	}
}

func fillNaN(xs []float64) {
	for i := range xs {
		xs[i] = math.NaN()
	}
}

// ScoreBatchContext is ScoreBatch that returns the featurizer's error
// (wrapping ErrFeaturizer) instead of NaN scores, or ctx's error.
func (m *Model) ScoreBatchContext(ctx context.Context, ts []*schemas.Trajectory, opts ...ScoreOption) ([][]float64, error) {
	flat, out := batchOut(ts)
	if err := m.scoreRows(flat, textRows(ctx, stepTexts(ts))); err != nil {
		return nil, err
	}
	applyNoise(flat, opts)
	return out, nil
}

// ScoreActionsContext is ScoreActions that returns the featurizer's error
// (wrapping ErrFeaturizer) instead of NaN scores; all the actions are
// featurized in one call.
func (m *Model) ScoreActionsContext(ctx context.Context, instruction, observation string, actions []string, dst []float64) error {
	s := actionScratchPool.Get().(*actionScratch)
	defer actionScratchPool.Put(s)
	n := len(actions)
	s.steps = s.steps[:0]
	for _, act := range actions {
		s.steps = append(s.steps, StepText{instruction, observation, act})
	}
	s.x = slices.Grow(s.x[:0], n*m.dim)[:n*m.dim]
	err := featurize(ctx, m.feat, s.steps, s.x)
	clear(s.steps) // drop the strings
	if err != nil {
		return err
	}
	s.x64 = toFloat64(s.x64, s.x)
	s.hid = grow(s.hid, n*m.hidden)
	m.forwardRows(s.x64, n, s.hid, dst[:n])
	return nil
}

// actionScratch is ScoreActionsContext's scratch, pooled: an explorer
// scores the actions of every state it visits.
type actionScratch struct {
	steps []StepText
	x     []float32
	x64   []float64
	hid   []float64
}

var actionScratchPool = sync.Pool{New: func() any { return new(actionScratch) }}

// evalGroupSteps is about how many steps EvaluateContext featurizes at once.
const evalGroupSteps = scoreChunkRows

// EvaluateContext is Evaluate that returns the featurizer's error (wrapping
// ErrFeaturizer), or ctx's error. It featurizes the steps of several
// trajectories per call and scores each trajectory as Evaluate does, so
// the two agree exactly when both succeed.
func EvaluateContext(ctx context.Context, m *Model, trajs []*schemas.Trajectory) (Evaluation, error) {
	scores := make([]float64, len(trajs))
	outcome := make([]float64, len(trajs))
	success := make([]bool, len(trajs))
	for lo := 0; lo < len(trajs); {
		hi, n := lo, 0
		for hi < len(trajs) && (hi == lo || n+len(trajs[hi].Steps) <= evalGroupSteps) {
			n += len(trajs[hi].Steps)
			hi++
		}
		steps := stepTexts(trajs[lo:hi])
		x := make([]float32, len(steps)*m.dim)
		for c := 0; c < len(steps); c += scoreChunkRows {
			e := min(len(steps), c+scoreChunkRows)
			if err := featurize(ctx, m.feat, steps[c:e], x[c*m.dim:e*m.dim]); err != nil {
				return Evaluation{}, err
			}
		}
		off := 0
		for i := lo; i < hi; i++ {
			t := trajs[i]
			r := make([]float64, len(t.Steps))
			rows := x[off*m.dim : (off+len(t.Steps))*m.dim]
			_ = m.scoreRows(r, func(_ *Model, dst []float32, lo, n int) error {
				copy(dst, rows[lo*m.dim:(lo+n)*m.dim])
				return nil
			})
			off += len(t.Steps)
			scores[i] = m.trajectoryTotal(r)
			outcome[i], success[i] = t.OutcomeReward, t.Success
		}
		lo = hi
	}
	return evaluation(scores, outcome, success), nil
}
