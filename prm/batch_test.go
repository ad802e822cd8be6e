package prm

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/rspo-dev/rspo/prm/prmtest"
)

// batchHash is the hash projection behind the BatchFeaturizer interface:
// it records the size of every batch and fails from call failAt on (0:
// never).
type batchHash struct {
	*HashProjection
	mu     sync.Mutex
	sizes  []int
	failAt int
}

var errDown = errors.New("test: the server is down")

func (b *batchHash) FeaturesBatch(_ context.Context, steps []StepText, dst []float32) error {
	b.mu.Lock()
	b.sizes = append(b.sizes, len(steps))
	fail := b.failAt > 0 && len(b.sizes) >= b.failAt
	b.mu.Unlock()
	if fail {
		return errDown
	}
	d := b.Dim()
	for i, s := range steps {
		b.HashProjection.Features(s.Instruction, s.Observation, s.Action, dst[i*d:(i+1)*d])
	}
	return nil
}

func (b *batchHash) Features(instruction, observation, action string, dst []float32) {
	if err := b.FeaturesBatch(context.Background(), []StepText{{instruction, observation, action}}, dst); err != nil {
		for i := range dst[:b.Dim()] {
			dst[i] = float32(math.NaN())
		}
	}
}

var _ BatchFeaturizer = (*batchHash)(nil)

// The batched paths give exactly what the step-by-step hash paths give,
// featurizing in chunks of at most scoreChunkRows steps.
func TestBatchPathsMatchStepByStep(t *testing.T) {
	trajs := householdLike(90, 30, 7) // 2700 steps: several chunks
	for i := range trajs[:40] {
		trajs[i].Success, trajs[i].OutcomeReward = true, 1
	}
	bf := &batchHash{HashProjection: DefaultFeaturizer()}
	ctx := context.Background()
	cfg := TrainConfig{Seed: 3, MaxEpochs: 4}
	want, wantRep, err := Train(ctx, trajs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Featurizer = bf
	got, gotRep, err := Train(ctx, trajs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.params, want.params) || gotRep.HeldoutEval != wantRep.HeldoutEval {
		t.Errorf("training through FeaturesBatch differs: %+v vs %+v", gotRep.HeldoutEval, wantRep.HeldoutEval)
	}
	if n := slices.Max(bf.sizes); n > scoreChunkRows {
		t.Errorf("a training batch of %d steps, want at most %d", n, scoreChunkRows)
	}

	bf.sizes = nil
	scores, err := got.ScoreBatchContext(ctx, trajs)
	if err != nil {
		t.Fatal(err)
	}
	if !equalRows(scores, want.ScoreBatch(trajs)) {
		t.Error("ScoreBatchContext differs from the hash featurizer's ScoreBatch")
	}
	if !equalRows(got.ScoreBatch(trajs), scores) {
		t.Error("ScoreBatch differs from ScoreBatchContext")
	}
	if len(bf.sizes) < 2 || slices.Max(bf.sizes) > scoreChunkRows {
		t.Errorf("scoring 2700 steps made batches %v, want several of at most %d", bf.sizes, scoreChunkRows)
	}
	ev, err := EvaluateContext(ctx, got, trajs)
	if err != nil {
		t.Fatal(err)
	}
	if want := Evaluate(want, trajs); ev != want {
		t.Errorf("EvaluateContext %+v, Evaluate %+v", ev, want)
	}
	s := trajs[0].Steps[0]
	acts := []string{s.Action, "look", "go to desk 1"}
	a, b := make([]float64, 3), make([]float64, 3)
	bf.sizes = nil
	if err := got.ScoreActionsContext(ctx, trajs[0].Instruction, s.Observation, acts, a); err != nil {
		t.Fatal(err)
	}
	want.ScoreActions(trajs[0].Instruction, s.Observation, acts, b)
	if !slices.Equal(a, b) || !slices.Equal(bf.sizes, []int{3}) {
		t.Errorf("ScoreActionsContext %v in batches %v, want %v in one batch of 3", a, bf.sizes, b)
	}
}

// EvaluateContext scores trajectories longer than a chunk as Evaluate does.
func TestEvaluateContextLongTrajectories(t *testing.T) {
	trajs := householdLike(6, 1500, 8)
	trajs[0].Success, trajs[0].OutcomeReward = true, 1
	bf := &batchHash{HashProjection: DefaultFeaturizer()}
	m, err := New(bf, ModelConfig{Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	got, err := EvaluateContext(context.Background(), m, trajs)
	if err != nil {
		t.Fatal(err)
	}
	if n := slices.Max(bf.sizes); n > scoreChunkRows {
		t.Errorf("a batch of %d steps, want at most %d", n, scoreChunkRows)
	}
	if want := Evaluate(Random(4), trajs); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestBatchFeaturizerFailures(t *testing.T) {
	trajs, _ := prmtest.Decisive("fail", 1, 20, 4)
	ctx := context.Background()
	bf := &batchHash{HashProjection: DefaultFeaturizer(), failAt: 1}
	if _, _, err := Train(ctx, trajs, TrainConfig{Featurizer: bf}); !errors.Is(err, ErrFeaturizer) || !errors.Is(err, errDown) {
		t.Errorf("Train: got %v, want ErrFeaturizer wrapping the featurizer's error", err)
	}
	m, err := New(bf, ModelConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.ScoreBatchContext(ctx, trajs); !errors.Is(err, errDown) {
		t.Errorf("ScoreBatchContext: got %v", err)
	}
	if _, err := EvaluateContext(ctx, m, trajs); !errors.Is(err, errDown) {
		t.Errorf("EvaluateContext: got %v", err)
	}
	for _, r := range m.ScoreSteps(trajs[0]) {
		if !math.IsNaN(r) {
			t.Fatalf("ScoreSteps: got %v, want NaN", r)
		}
	}
	if e := Evaluate(m, trajs); !math.IsNaN(e.MSE) {
		t.Errorf("Evaluate with a failing featurizer: MSE %v, want NaN", e.MSE)
	}
	ts := NewTiltScorer(ctx, m)
	dst := []float64{1, 2}
	ts.ScoreActions("i", "o", []string{"a", "b"}, dst)
	if !math.IsNaN(dst[0]) || !math.IsNaN(dst[1]) || !errors.Is(ts.Err(), errDown) {
		t.Errorf("TiltScorer: scores %v, error %v", dst, ts.Err())
	}
	if err := NewTiltScorer(ctx, Random(1)).Err(); err != nil {
		t.Errorf("a fresh scorer reports %v", err)
	}
}

func equalRows(a, b [][]float64) bool {
	return slices.EqualFunc(a, b, func(x, y []float64) bool { return slices.Equal(x, y) })
}
