package learner_test

import (
	"fmt"
	"math"

	"github.com/rspo-dev/rspo/learner"
)

// The GRPO advantage of RSPO.md's worked example, and the all-fail group
// that RSPO is built to break.
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
