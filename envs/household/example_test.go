package household_test

import (
	"fmt"

	"github.com/rspo-dev/rspo/envs"
	_ "github.com/rspo-dev/rspo/envs/household"
)

// The expert solves the first in-distribution evaluation task in a small
// home of the easy preset.
func Example() {
	env, err := envs.New("household", map[string]string{"preset": "easy"})
	if err != nil {
		panic(err)
	}
	tasks, _ := env.Tasks(envs.SplitEvalIn, 1, 0)
	ep, _ := env.Reset(tasks[0])
	fmt.Println(ep.Observation())
	expert := env.(envs.Planner)
	for !ep.Done() {
		action, _ := expert.ExpertAction(ep)
		res, _ := ep.Step(action)
		fmt.Println(">", action)
		fmt.Println(res.Observation)
	}
	fmt.Println("success:", ep.Success(), "steps:", ep.Steps())
	// Output:
	// -= Welcome to TextWorld, ALFRED! =-
	//
	// You are in the middle of a room. Looking quickly around you, you see a armchair 1, a drawer 1, a safe 1, a shelf 1, a shelf 2, a sidetable 1, and a sofa 1.
	//
	// Your task is to: put a pillow in armchair.
	// > go to sofa 1
	// You arrive at sofa 1. On the sofa 1, you see a laptop 1, and a pillow 1.
	// > take pillow 1 from sofa 1
	// You pick up the pillow 1 from the sofa 1.
	// > go to armchair 1
	// You arrive at armchair 1. On the armchair 1, you see a cellphone 1.
	// > move pillow 1 to armchair 1
	// You move the pillow 1 to the armchair 1.
	// success: true steps: 4
}
