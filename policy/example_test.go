package policy_test

import (
	"context"
	"fmt"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/policy/policytest"
)

// A fresh policy is uniform over the admissible actions; Rollout records
// every step with its behaviour log-prob, deterministically for a seed.
func ExampleRollout() {
	env := policytest.Courier{}
	tasks, _ := env.Tasks(envs.SplitEvalIn, 1, 0)
	p, _ := policy.New(policy.Config{})
	tr, _ := policy.Rollout(context.Background(), env, tasks[0], p, policy.RolloutOptions{Seed: 3})
	fmt.Println(tr.Instruction)
	for _, st := range tr.Steps[:3] {
		fmt.Printf("%-15q log(1/%d) = %.3f\n", st.Action, st.NumAdmissible, st.BehaviorLogProb)
	}
	// Output:
	// bring the gem to the chest.
	// "go to room 2"  log(1/7) = -1.946
	// "go to room 4"  log(1/7) = -1.946
	// "go to room 3"  log(1/6) = -1.792
}
