package shop_test

import (
	"fmt"

	"github.com/rspo-dev/rspo/envs"
	_ "github.com/rspo-dev/rspo/envs/shop" // registers "shop"
)

// Example plays the expert on the first eval goal of the easy preset.
func Example() {
	env, err := envs.New("shop", map[string]string{"preset": "easy"})
	if err != nil {
		panic(err)
	}
	tasks, err := env.Tasks(envs.SplitEval, 1, 0)
	if err != nil {
		panic(err)
	}
	ep, err := env.Reset(tasks[0])
	if err != nil {
		panic(err)
	}
	fmt.Println(tasks[0].ID, tasks[0].Type)
	fmt.Println(tasks[0].Instruction)
	expert := env.(envs.Planner)
	for !ep.Done() {
		action, err := expert.ExpertAction(ep)
		if err != nil {
			panic(err)
		}
		fmt.Println(">", action)
		if _, err := ep.Step(action); err != nil {
			panic(err)
		}
	}
	fmt.Printf("steps %d, reward %.2f, success %v\n", ep.Steps(), ep.Outcome(), ep.Success())
	// Output:
	// shop/eval/0 food
	// i am looking for tea bags that is individually wrapped, in a box of 100 count, and price lower than 40.00 dollars
	// > search[individually wrapped tea bags 100 count]
	// > click[b0smym5jgl]
	// > click[100 count]
	// > click[buy now]
	// steps 4, reward 1.00, success true
}
