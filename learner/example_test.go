package learner_test

import (
	"fmt"
	"math"

	"github.com/rspo-dev/rspo/learner"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
)

// The GRPO advantage of docs/algorithm.md's worked example (eq. 2), and
// the all-fail group that RSPO is built to break.
func ExampleNormalize() {
	adv, mean, std := learner.Normalize([]float64{1, 0, 1, 0, 0}, 0, 1e-6)
	fmt.Printf("mean %.1f std %.2f advantages %.2f\n", mean, std, adv)
	adv, _, _ = learner.Normalize([]float64{0, 0, 0, 0}, 0, 1e-6)
	fmt.Println(adv)
	// Output:
	// mean 0.4 std 0.49 advantages [1.22 -0.82 1.22 -0.82 -0.82]
	// [0 0 0 0]
}

// The off-policy clip is centred at c = π_old/π_B: a buffer step whose
// behaviour policy was twice as likely to act as π_old keeps its gradient
// near ratio 0.5 and is clipped above 0.6.
func ExampleSurrogate() {
	logB := -1.0
	logC := -0.6931471805599453 // log(π_old/π_B) = log 0.5
	for _, ratio := range []float64{0.5, 0.7} {
		obj, grad, _, clipped := learner.Surrogate(logB+logOf(ratio), logB, logC, 0.1, 1)
		fmt.Printf("ratio %.1f: objective %.2f gradient %.2f clipped %v\n", ratio, obj, grad, clipped)
	}
	// Output:
	// ratio 0.5: objective 0.50 gradient 0.50 clipped false
	// ratio 0.7: objective 0.60 gradient 0.00 clipped true
}

func logOf(x float64) float64 { return math.Log(x) }

// An update assembled in one trainer and applied, through the wire form,
// in another: the external-trainer protocol in miniature. The learner's
// side assembles and exports (no weights needed); the trainer's side
// imports and applies.
func ExampleBatch_Export() {
	traj := func(id string, success bool) *schemas.Trajectory {
		t := &schemas.Trajectory{ID: id, TaskID: "t1", GroupID: "g1", Instruction: "find the coin.", Success: success}
		for i := range 2 {
			t.Steps = append(t.Steps, schemas.Step{Observation: fmt.Sprintf("room %d", i), Admissible: []string{"look", "go east"},
				NumAdmissible: 2, Action: "go east", ActionIndex: 1, BehaviorLogProb: -0.6931471805599453})
		}
		if success {
			t.OutcomeReward, t.Steps[1].Reward = 1, 1
		}
		return t
	}
	on := []*schemas.Trajectory{traj("a", true), traj("b", false)}
	newPolicy := func() *policy.Policy {
		p, err := policy.New(policy.Config{Buckets: 256, EmbedDim: 3, Hidden: 4, Seed: 1})
		check(err)
		return p
	}
	learnerSide, err := learner.New(newPolicy(), learner.Config{})
	check(err)
	trainerSide, err := learner.New(newPolicy(), learner.Config{})
	check(err)

	b, err := learnerSide.Assemble(on, nil)
	check(err)
	w, err := b.Export("run1", 0)
	check(err)
	data, err := schemas.EncodeTrainBatch(w)
	check(err)
	got, err := schemas.DecodeTrainBatch(data)
	check(err)
	batch, err := trainerSide.Import(got)
	check(err)
	st, err := trainerSide.Apply(batch)
	check(err)
	fmt.Printf("update %d: %d rows, advantages %.3f %.3f, weight %.2f; trainer now at version %d\n",
		w.Update, len(got.Steps), got.Steps[0].Advantage, got.Steps[2].Advantage, got.Steps[0].Weight, st.PolicyVersion)
	// Output:
	// update 1: 4 rows, advantages 1.000 -1.000, weight 0.25; trainer now at version 1
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}
