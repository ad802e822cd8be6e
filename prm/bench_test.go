package prm

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/schemas"
)

// householdLike returns n trajectories of steps steps with household-sized
// text (an instruction, ~70-byte observations, short actions).
func householdLike(n, steps int, seed uint64) []*schemas.Trajectory {
	rng := rand.New(rand.NewPCG(seed, 2))
	recs := []string{"cabinet", "drawer", "shelf", "countertop", "fridge", "microwave", "sinkbasin", "bed", "desk"}
	objs := []string{"apple", "mug", "cellphone", "book", "egg", "lettuce", "knife", "pen"}
	out := make([]*schemas.Trajectory, n)
	for i := range out {
		t := &schemas.Trajectory{ID: fmt.Sprintf("b-%d", i), Instruction: fmt.Sprintf("put a %s in %s.", objs[rng.IntN(len(objs))], recs[rng.IntN(len(recs))])}
		for range steps {
			r, o := recs[rng.IntN(len(recs))], objs[rng.IntN(len(objs))]
			k := rng.IntN(4) + 1
			t.Steps = append(t.Steps, schemas.Step{
				Observation: fmt.Sprintf("You arrive at %s %d. The %s %d is open. In it, you see a %s %d.", r, k, r, k, o, k),
				Action:      fmt.Sprintf("take %s %d from %s %d", o, k, r, k),
			})
		}
		t.Success = rng.IntN(10) == 0
		if t.Success {
			t.OutcomeReward = 1
		}
		out[i] = t
	}
	return out
}

// reportThroughput reports steps per wall second and per CPU second (the
// process's CPU time since cpu0, which includes every thread).
func reportThroughput(b *testing.B, steps int, cpu0 time.Duration) {
	b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(steps)/cpu.Seconds(), "steps/cpu-s")
	}
}

// BenchmarkScoreSteps measures in-process scoring of one 30-step trajectory
// at a time (what an explorer does per episode).
func BenchmarkScoreSteps(b *testing.B) {
	m := Random(1)
	trajs := householdLike(64, 30, 1)
	b.ResetTimer()
	cpu0, steps := cpuTime(), 0
	for i := 0; i < b.N; i++ {
		steps += len(m.ScoreSteps(trajs[i%len(trajs)]))
	}
	reportThroughput(b, steps, cpu0)
}

// BenchmarkScoreBatch measures scoring 16 trajectories per call (what the
// service does per request).
func BenchmarkScoreBatch(b *testing.B) {
	m := Random(1)
	trajs := householdLike(16, 30, 2)
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		m.ScoreBatch(trajs)
	}
	reportThroughput(b, b.N*16*30, cpu0)
}

// BenchmarkFeatures measures the frozen featurizer alone.
func BenchmarkFeatures(b *testing.B) {
	f := DefaultFeaturizer()
	dst := make([]float32, f.Dim())
	t := householdLike(1, 1, 3)[0]
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		f.Features(t.Instruction, t.Steps[0].Observation, t.Steps[0].Action, dst)
	}
	reportThroughput(b, b.N, cpu0)
}

// BenchmarkTrainEpoch measures training throughput in trajectory steps per
// second (one epoch per iteration, no early stopping).
func BenchmarkTrainEpoch(b *testing.B) {
	trajs := householdLike(512, 30, 4)
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if _, _, err := Train(context.Background(), trajs, TrainConfig{MaxEpochs: 1, Seed: uint64(i)}); err != nil {
			b.Fatal(err)
		}
	}
	reportThroughput(b, b.N*512*30, cpu0)
}

// BenchmarkScoreBatchCycle scores an explorer cycle's worth of steps in one
// call (128 trajectories of 50 steps) and reports the bytes it allocates.
func BenchmarkScoreBatchCycle(b *testing.B) {
	m := Random(1)
	trajs := householdLike(128, 50, 5)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		m.ScoreBatch(trajs)
	}
	reportThroughput(b, b.N*128*50, cpu0)
}

// BenchmarkScoreActions scores the candidate actions of one household
// state (what a tilted explorer does at every step), with the context
// featurizer of the tilted recipe.
func BenchmarkScoreActions(b *testing.B) {
	feat, err := NewHashProjection(HashProjectionConfig{ActionContext: true})
	if err != nil {
		b.Fatal(err)
	}
	m, err := New(feat, ModelConfig{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	tr := householdLike(1, 20, 7)[0]
	actions := make([]string, len(tr.Steps))
	for i, s := range tr.Steps {
		actions[i] = s.Action
	}
	dst := make([]float64, len(actions))
	b.ReportAllocs()
	cpu0 := cpuTime()
	for i := 0; b.Loop(); i++ {
		m.ScoreActions(tr.Instruction, tr.Steps[i%len(tr.Steps)].Observation, actions, dst)
	}
	reportThroughput(b, b.N*len(actions), cpu0)
}
