package prm

import (
	"context"
	"math/rand/v2"
	"testing"
)

// BenchmarkFitEpoch measures the PRM's training epochs alone (minibatch
// Adam and the held-out loss, no featurizing: the dataset is built once
// outside the timer), in trajectory steps per second, on 4096
// household-like trajectories with a step target, as the recipe's PRM
// trains on its source runs.
func BenchmarkFitEpoch(b *testing.B) {
	trajs := householdLike(4096, 30, 4)
	for i := range trajs {
		if i%3 == 0 { // a third succeed, as in the recipe's source runs
			trajs[i].Success, trajs[i].OutcomeReward = true, 1
		}
	}
	cfg := TrainConfig{Target: TargetStep, MaxEpochs: 1, Seed: 1}.withDefaults()
	m, err := initialModel(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ds, err := newDataset(context.Background(), m.feat, trajs)
	if err != nil {
		b.Fatal(err)
	}
	trainIdx, heldIdx := holdoutSplit(ds.keys, ds.success, cfg.HoldoutFraction, cfg.Seed)
	tr := newTrainer(m, ds, cfg, trainIdx, heldIdx)
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
