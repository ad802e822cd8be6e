package swapper_test

import (
	"fmt"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/swapper"
)

// The swap: the dense labels become provenance, the outcome becomes the
// label (on the last step), and the priority keys come from the state keys.
func ExampleRelabel() {
	explored := &schemas.Trajectory{
		ID: "demo.explore.x.1", Run: "demo", Source: schemas.SourceExplore, Env: "household",
		OutcomeReward: 1, Success: true,
		Steps: []schemas.Step{
			{Action: "go to fridge 1", ActionIndex: -1, BehaviorLogProb: -1.2, Reward: 0.3, DenseReward: 0.3, StateKey: 7},
			{Action: "go to sink 1", ActionIndex: -1, BehaviorLogProb: -0.7, Reward: 0.1, DenseReward: 0.1, StateKey: 8},
			{Action: "go to fridge 1", ActionIndex: -1, BehaviorLogProb: -0.9, Reward: 0.4, DenseReward: 0.4, StateKey: 7},
			{Action: "take apple 1", ActionIndex: -1, BehaviorLogProb: -0.2, Reward: 0.6, DenseReward: 0.6, StateKey: 9},
		},
	}
	rec, err := swapper.Relabel(explored)
	if err != nil {
		panic(err)
	}
	for _, s := range rec.Steps {
		fmt.Printf("%-15s reward %g  dense %g  logp %g\n", s.Action, s.Reward, s.DenseReward, s.BehaviorLogProb)
	}
	fmt.Println("swapped:", rec.Swapped, "distinct:", rec.DistinctStates, "repeated:", rec.RepeatedVisits)
	// Output:
	// go to fridge 1  reward 0  dense 0.3  logp -1.2
	// go to sink 1    reward 0  dense 0.1  logp -0.7
	// go to fridge 1  reward 0  dense 0.4  logp -0.9
	// take apple 1    reward 1  dense 0.6  logp -0.2
	// swapped: true distinct: 3 repeated: 1
}
