package prm

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/rspo-dev/rspo/schemas"
)

// BenchmarkFitEpoch measures the PRM's training epochs alone (minibatch
// Adam and the held-out loss, no featurizing: the dataset is built once
// outside the timer), in trajectory steps per second, on 4096
// household-like trajectories with a step target, as the recipe's PRM
// trains on its source runs.
func BenchmarkFitEpoch(b *testing.B) {
	trajs := thirdSucceed(householdLike(4096, 30, 4))
	tr, trainIdx := newTestTrainer(b, trajs, TrainConfig{Target: TargetStep, MaxEpochs: 1, Seed: 1})
	rng := rand.New(rand.NewPCG(1, 2))
	steps := 0
	for _, i := range trainIdx {
		steps += len(trajs[i].Steps)
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		if err := tr.fit(context.Background(), rng); err != nil {
			b.Fatal(err)
		}
	}
	reportThroughput(b, b.N*steps, cpu0)
}

// thirdSucceed marks every third trajectory a success, as a third of the
// recipe's source runs' trajectories are.
func thirdSucceed(trajs []*schemas.Trajectory) []*schemas.Trajectory {
	for i := range trajs {
		if i%3 == 0 {
			trajs[i].Success, trajs[i].OutcomeReward = true, 1
		}
	}
	return trajs
}

// newTestTrainer featurizes trajs and returns the trainer Train would fit
// on them under cfg, with its training split.
func newTestTrainer(tb testing.TB, trajs []*schemas.Trajectory, cfg TrainConfig) (*trainer, []int) {
	tb.Helper()
	cfg = cfg.withDefaults()
	m, err := initialModel(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	ds, err := newDataset(context.Background(), m.feat, trajs)
	if err != nil {
		tb.Fatal(err)
	}
	trainIdx, heldIdx := holdoutSplit(ds.keys, ds.success, cfg.HoldoutFraction, cfg.Seed)
	return newTrainer(m, ds, cfg, trainIdx, heldIdx), trainIdx
}
