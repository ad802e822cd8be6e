package prm_test

import (
	"context"
	"fmt"

	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/prm/prmtest"
)

// Train a PRM on episodes whose outcome is decided by one step (pressing the
// red or the blue button), then see where it puts the reward of a new
// successful episode.
func Example() {
	trajs, _ := prmtest.Decisive("example", 1, 300, 6)
	m, rep, err := prm.Train(context.Background(), trajs, prm.TrainConfig{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("held-out AUC ≥ 0.95: %v\n", rep.HeldoutEval.AUC >= 0.95)

	test, decisive := prmtest.Decisive("example", 2, 10, 6)
	for i, t := range test {
		if !t.Success {
			continue
		}
		r := m.ScoreSteps(t)
		best := 0
		for k := range r {
			if r[k] > r[best] {
				best = k
			}
		}
		fmt.Printf("largest r̂ at the decisive step %q: %v\n", t.Steps[decisive[i]].Action, best == decisive[i])
		break
	}
	fmt.Println("gate open at AUC threshold 0.7:", m.ShapingEnabled(0.7))
	fmt.Println("random control passes the gate:", prm.Random(1).ShapingEnabled(0.7))
	// Output:
	// held-out AUC ≥ 0.95: true
	// largest r̂ at the decisive step "press red button": true
	// gate open at AUC threshold 0.7: true
	// random control passes the gate: false
}
