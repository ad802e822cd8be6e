package prm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rspo-dev/rspo/prm/prmtest"
	"github.com/rspo-dev/rspo/schemas"
)

// TestTrainFindsDecisiveStep is the acceptance test: when the
// outcome is decided by one particular step, the trained PRM gives that step
// clearly the largest reward.
func TestTrainFindsDecisiveStep(t *testing.T) {
	trajs, _ := prmtest.Decisive("test", 1, 400, 8)
	m, rep, err := Train(context.Background(), trajs, TrainConfig{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("report: %+v", rep)
	test, decisive := prmtest.Decisive("test", 2, 200, 8)
	var argmaxHits, successes int
	var minMargin = math.Inf(1)
	for i, tr := range test {
		if !tr.Success {
			continue
		}
		successes++
		r := m.ScoreSteps(tr)
		best, other := decisive[i], math.Inf(-1)
		for k, v := range r {
			if k != best {
				other = math.Max(other, v)
			}
		}
		if r[best] > other {
			argmaxHits++
		}
		minMargin = math.Min(minMargin, r[best]-other)
	}
	if argmaxHits != successes {
		t.Errorf("decisive step has the largest reward in %d of %d successes, want all", argmaxHits, successes)
	}
	if minMargin < 0.3 {
		t.Errorf("smallest margin of the decisive step over the next step: got %.3f, want ≥ 0.3", minMargin)
	}
	if rep.HeldoutEval.AUC < 0.95 {
		t.Errorf("held-out AUC: got %.3f, want ≥ 0.95", rep.HeldoutEval.AUC)
	}
	if !m.ShapingEnabled(0.7) {
		t.Errorf("ShapingEnabled(0.7) = false for a model with AUC %.3f", m.Info.HeldoutAUC)
	}
}

// TestBalancedWeightingLearnsRareSuccesses reproduces the prototype's
// failure: with 5% successes, the plain MSE is dominated by failures, while
// balanced weighting must still rank successes above failures.
func TestBalancedWeightingLearnsRareSuccesses(t *testing.T) {
	all, _ := prmtest.Decisive("test", 3, 1200, 6)
	var trajs []*schemas.Trajectory
	nSucc := 0
	for _, tr := range all {
		if tr.Success {
			if nSucc >= 30 {
				continue
			}
			nSucc++
		}
		trajs = append(trajs, tr)
	}
	m, rep, err := Train(context.Background(), trajs, TrainConfig{Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rep.SuccessWeight <= rep.FailureWeight {
		t.Errorf("success weight %.2f not above failure weight %.2f", rep.SuccessWeight, rep.FailureWeight)
	}
	test, _ := prmtest.Decisive("test", 4, 200, 6)
	ev := Evaluate(m, test)
	if ev.MeanScoreSuccess < 0.5 {
		t.Errorf("mean R̂ of successes: got %.3f, want ≥ 0.5 (the prototype's unweighted PRM scored them ~0.03)", ev.MeanScoreSuccess)
	}
	if ev.AUC < 0.95 {
		t.Errorf("AUC on fresh trajectories: got %.3f, want ≥ 0.95", ev.AUC)
	}
}

func TestTrainWarmStart(t *testing.T) {
	trajs, _ := prmtest.Decisive("test", 5, 100, 5)
	first, _, err := Train(context.Background(), trajs, TrainConfig{Seed: 1, MaxEpochs: 3})
	if err != nil {
		t.Fatal(err)
	}
	before := append([]float64(nil), first.params...)
	second, rep, err := Train(context.Background(), trajs, TrainConfig{Seed: 2, WarmStart: first, MaxEpochs: 3})
	if err != nil {
		t.Fatal(err)
	}
	if second.Version != first.Version+1 || rep.FromVersion != first.Version || !rep.WarmStart {
		t.Errorf("versions: got %d from %d (warm %v), want %d from %d", second.Version, rep.FromVersion, rep.WarmStart, first.Version+1, first.Version)
	}
	for i := range before {
		if first.params[i] != before[i] {
			t.Fatalf("warm start modified the previous model's parameter %d", i)
		}
	}
	if second.Featurizer() != first.Featurizer() {
		t.Errorf("warm start changed the featurizer")
	}
}

func TestTrainErrors(t *testing.T) {
	trajs, _ := prmtest.Decisive("test", 6, 10, 3)
	nan := *trajs[0]
	nan.OutcomeReward = math.NaN()
	tests := []struct {
		name  string
		trajs []*schemas.Trajectory
		cfg   TrainConfig
		want  error
	}{
		{"too few", trajs[:4], TrainConfig{}, ErrTooFewTrajectories},
		{"nil trajectory", append(append([]*schemas.Trajectory{}, trajs...), nil), TrainConfig{}, ErrInvalidTrajectory},
		{"NaN outcome", append(append([]*schemas.Trajectory{}, trajs...), &nan), TrainConfig{}, ErrInvalidTrajectory},
		{"bad holdout", trajs, TrainConfig{HoldoutFraction: 0.9}, ErrInvalidConfig},
		{"bad weighting", trajs, TrainConfig{Weighting: "equalish"}, ErrInvalidConfig},
		{"negative lr", trajs, TrainConfig{LearningRate: -1}, ErrInvalidConfig},
		{"huge hidden", trajs, TrainConfig{Model: ModelConfig{Hidden: MaxHidden + 1}}, ErrInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Train(context.Background(), tt.trajs, tt.cfg)
			if !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
}

func TestTrainConfigValidateReportsEveryProblem(t *testing.T) {
	cfg := TrainConfig{LearningRate: -1, BatchSize: -1, Patience: -2, Weighting: "x", Target: "y"}.withDefaults()
	err := cfg.Validate()
	var n int
	for _, field := range []string{"LearningRate", "BatchSize", "Patience", "Weighting", "Target"} {
		var ce *ConfigError
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			if errors.As(e, &ce) && ce.Field == field {
				n++
			}
		}
	}
	if n != 5 {
		t.Errorf("Validate reported %d of the 5 bad fields: %v", n, err)
	}
}

func TestTrainHonoursContext(t *testing.T) {
	trajs, _ := prmtest.Decisive("test", 7, 50, 4)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := Train(ctx, trajs, TrainConfig{}); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

func TestHoldoutSplit(t *testing.T) {
	ids := make([]string, 200)
	success := make([]bool, 200)
	for i := range ids {
		ids[i] = fmt.Sprintf("traj-%d", i)
		success[i] = i%29 == 0 // 7 successes
	}
	train, held := holdoutSplit(ids, success, 0.2, 1)
	if len(train)+len(held) != 200 {
		t.Fatalf("split sizes %d + %d, want 200", len(train), len(held))
	}
	if len(held) < 25 || len(held) > 55 {
		t.Errorf("held out %d of 200 at fraction 0.2, want about 40", len(held))
	}
	heldSucc := 0
	isHeld := map[string]bool{}
	for _, i := range held {
		isHeld[ids[i]] = true
		if success[i] {
			heldSucc++
		}
	}
	if heldSucc == 0 || heldSucc == 7 {
		t.Errorf("held-out successes: got %d of 7, want some but not all", heldSucc)
	}
	// Membership is stable when the data grows: what was held out stays held out.
	_, held2 := holdoutSplit(append(ids, "traj-new-1", "traj-new-2"), append(success, false, true), 0.2, 1)
	kept := 0
	for _, i := range held2 {
		if isHeld[append(ids, "traj-new-1", "traj-new-2")[i]] {
			kept++
		}
	}
	if kept != len(held) {
		t.Errorf("after adding data, %d of %d held-out trajectories are still held out, want all", kept, len(held))
	}
}

func TestHoldoutSplitSmallClasses(t *testing.T) {
	tests := []struct {
		name          string
		success       []bool
		wantHeldSucc  int
		wantTrainSucc int
	}{
		{"single success trains", []bool{true, false, false, false, false, false}, 0, 1},
		{"two successes: one each side", []bool{true, true, false, false, false, false}, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ids := make([]string, len(tt.success))
			train, held := holdoutSplit(ids, tt.success, 0.2, 3)
			count := func(idx []int) (n int) {
				for _, i := range idx {
					if tt.success[i] {
						n++
					}
				}
				return n
			}
			if got := count(held); got != tt.wantHeldSucc {
				t.Errorf("held-out successes: got %d, want %d", got, tt.wantHeldSucc)
			}
			if got := count(train); got != tt.wantTrainSucc {
				t.Errorf("train successes: got %d, want %d", got, tt.wantTrainSucc)
			}
			if len(held) == 0 || len(train) == 0 {
				t.Errorf("split %d/%d, want both sides non-empty", len(train), len(held))
			}
		})
	}
}

func TestHoldoutSplitKeepsTasksTogether(t *testing.T) {
	var trajs []*schemas.Trajectory
	for task := range 50 {
		for k := range 4 {
			trajs = append(trajs, &schemas.Trajectory{
				ID: fmt.Sprintf("t%d-%d", task, k), Env: "household", TaskID: fmt.Sprintf("household/train/%d", task),
			})
		}
	}
	keys := make([]string, len(trajs))
	for i, tr := range trajs {
		keys[i] = splitKey(tr)
	}
	_, held := holdoutSplit(keys, make([]bool, len(trajs)), 0.2, 1)
	side := map[string]int{}
	for _, i := range held {
		side[trajs[i].TaskID]++
	}
	for task, n := range side {
		if n != 4 {
			t.Errorf("task %s: %d of its 4 rollouts held out, want all or none", task, n)
		}
	}
	if len(side) == 0 {
		t.Error("no task held out")
	}
}

// With TargetStep every step estimates the outcome: steps of successful
// trajectories score near 1 wherever they are, and failures near 0, so
// the score of an action says how likely success is after it.
func TestStepTargetScoresEveryStepByItsOutcome(t *testing.T) {
	trajs, _ := prmtest.Decisive("train", 11, 400, 6)
	m, rep, err := Train(t.Context(), trajs, TrainConfig{Target: TargetStep})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Target != TargetStep || m.Info.Target != TargetStep {
		t.Fatalf("report target %q, model info target %q", rep.Target, m.Info.Target)
	}
	if rep.HeldoutEval.AUC < 0.95 {
		t.Errorf("held-out AUC of the mean step score %.3f, want ≥ 0.95", rep.HeldoutEval.AUC)
	}
	// Evaluate ranks a step-target model's trajectories by the mean step
	// score, as the report does: long failures must not outrank successes.
	long, _ := prmtest.Decisive("long", 12, 200, 6)
	for i, tr := range long {
		if !tr.Success {
			long[i].Steps = append(tr.Steps, tr.Steps...) // failures twice as long
		}
	}
	if e := Evaluate(m, long); e.AUC < 0.95 {
		t.Errorf("Evaluate of a step-target model on long failures: AUC %.3f, want ≥ 0.95", e.AUC)
	}
	cands := []string{prmtest.SuccessAction, prmtest.FailureAction}
	got := make([]float64, 2)
	m.ScoreActions(trajs[0].Instruction, trajs[0].Steps[0].Observation, cands, got)
	if !(got[0] > 0.6 && got[1] < 0.4) {
		t.Errorf("step scores: success action %.3f, failure action %.3f; want them near the outcomes 1 and 0", got[0], got[1])
	}
	// Under the sum target the same steps share the outcome with five
	// others, so the decisive action scores well below 1.
	ms, _, err := Train(t.Context(), trajs, TrainConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ms.ScoreActions(trajs[0].Instruction, trajs[0].Steps[0].Observation, cands, got)
	if got[0] > 0.9 {
		t.Errorf("sum target scores the success action %.3f: the targets are not different", got[0])
	}
}

// OnEpoch hears every epoch of a fit, ending with the one training stopped
// at, and its best epoch is the one the report keeps.
func TestTrainReportsEveryEpoch(t *testing.T) {
	var got []EpochProgress
	_, rep, err := Train(context.Background(), householdLike(256, 10, 3), TrainConfig{MaxEpochs: 40, Patience: 5,
		OnEpoch: func(p EpochProgress) { got = append(got, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != rep.Epochs || len(got) == 0 {
		t.Fatalf("heard %d epochs, the report says %d", len(got), rep.Epochs)
	}
	for i, p := range got {
		if p.Epoch != i+1 || p.MaxEpochs != 40 || p.Patience != 5 || p.BestLoss > p.Loss+1e-12 && p.BestEpoch == p.Epoch || p.Last != (i == len(got)-1) {
			t.Fatalf("epoch report %d: %+v", i, p)
		}
	}
	if last := got[len(got)-1]; last.BestEpoch != rep.BestEpoch || last.BestLoss != rep.HeldoutWeightedMSE {
		t.Errorf("last epoch report %+v; the report keeps epoch %d, loss %v", last, rep.BestEpoch, rep.HeldoutWeightedMSE)
	}
}

// A dataset built in several Adds trains the model one Train of the same
// trajectories in the same order trains, to the bit: a caller may hand
// them over a run at a time and let each go.
func TestDatasetInPartsTrainsAsTrain(t *testing.T) {
	trajs := householdLike(600, 12, 7)
	cfg := TrainConfig{Target: TargetStep, Seed: 2, MaxEpochs: 5}
	whole, _, err := Train(t.Context(), trajs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := NewDataset(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range [][]int{{0, 1}, {1, 250}, {250, 599}, {599, 600}} {
		if err := ds.Add(t.Context(), trajs[part[0]:part[1]]); err != nil {
			t.Fatal(err)
		}
	}
	parts, rep, err := ds.Train(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	a, _ := EncodeSnapshot(whole)
	b, _ := EncodeSnapshot(parts)
	if string(a) != string(b) || rep.Trajectories != 600 {
		t.Errorf("trained in parts: %d trajectories, same model %v; want 600 and the same model", rep.Trajectories, string(a) == string(b))
	}
}

// Scoring whole splits (the held-out loss every epoch, the report's train
// and held-out scores) must not hold a split's rows in float64: the
// trainer's float64 scratch stays the size of a minibatch or a scoring
// chunk, however many trajectories it trains on.
func TestTrainingScratchDoesNotGrowWithTheDataset(t *testing.T) {
	trajs := thirdSucceed(householdLike(2048, 30, 5))
	for _, target := range []Target{TargetSum, TargetStep} {
		tr, _ := newTestTrainer(t, trajs, TrainConfig{Target: target, MaxEpochs: 2, Seed: 1})
		cfg, m, ds := tr.cfg, tr.m, tr.ds
		if err := tr.fit(context.Background(), rand.New(rand.NewPCG(1, 2))); err != nil {
			t.Fatal(err)
		}
		tr.report(cfg)
		maxSteps := 0
		for _, tj := range trajs {
			maxSteps = max(maxSteps, len(tj.Steps))
		}
		// grow keeps twice what it was asked for.
		bound := 2 * cfg.BatchSize * maxSteps * m.dim
		if ds.numRows()*m.dim <= bound {
			t.Fatalf("the dataset's %d rows fit in a minibatch's scratch: too small to tell", ds.numRows())
		}
		if got := cap(tr.slotX); got > bound {
			t.Fatalf("target %v: float64 rows scratch holds %d values, want at most %d (a minibatch's rows; the dataset has %d rows of %d)",
				target, got, bound, ds.numRows(), m.dim)
		}
		if got, bound := cap(tr.slotHid), 2*cfg.BatchSize*maxSteps*m.hidden; got > bound {
			t.Fatalf("target %v: activations scratch holds %d values, want at most %d", target, got, bound)
		}
	}
}
