package prm

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestTrainGolden pins, bit for bit, what the tilted recipe's kind of
// training (a step-target fit with the action-context featurizer) gives on
// a fixed set and seed: the model's snapshot and its action scores. A
// change that should leave training as it is (faster arithmetic, less
// allocation) must keep this file; one that changes what is learned must
// regenerate it with -update and say so.
func TestTrainGolden(t *testing.T) {
	feat, err := NewHashProjection(HashProjectionConfig{ActionContext: true})
	if err != nil {
		t.Fatal(err)
	}
	trajs := householdLike(300, 12, 11)
	m, rep, err := Train(t.Context(), trajs, TrainConfig{Target: TargetStep, Featurizer: feat, Seed: 3, MaxEpochs: 40})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := EncodeSnapshot(m)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "epochs %d, best %d, held-out AUC %.17g\n", rep.Epochs, rep.BestEpoch, rep.HeldoutEval.AUC)
	fmt.Fprintf(&b, "snapshot sha256 %x\n", sha256.Sum256(snap))
	h := sha256.New()
	for _, r := range m.ScoreBatch(trajs[:50]) {
		for _, v := range r {
			_ = binary.Write(h, binary.LittleEndian, math.Float64bits(v))
		}
	}
	fmt.Fprintf(&b, "scores of 50 trajectories sha256 %x\n", h.Sum(nil))
	tr := trajs[0]
	actions := make([]string, len(tr.Steps))
	for i, s := range tr.Steps {
		actions[i] = s.Action
	}
	dst := make([]float64, len(actions))
	m.ScoreActions(tr.Instruction, tr.Steps[3].Observation, actions, dst)
	for i, v := range dst {
		fmt.Fprintf(&b, "action %d %016x\n", i, math.Float64bits(v))
	}
	golden(t, "train_step_context.golden", []byte(b.String()))
}
