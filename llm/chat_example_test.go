package llm_test

import (
	"fmt"

	"github.com/rspo-dev/rspo/llm"
	"github.com/rspo-dev/rspo/policy"
)

// A model's reply becomes an action: trimmed, unquoted, matched to the
// admissible list (ignoring case if need be); an unmatched reply is taken
// as it is, an inadmissible action (index −1).
func ExampleParseAction() {
	acts := []string{"open fridge 1", "go to countertop 1"}
	for _, reply := range []string{"open fridge 1", ` "Go to countertop 1." `, "I think I should look around"} {
		a, i := llm.ParseAction(reply, acts)
		fmt.Printf("%q → %q (%d)\n", reply, a, i)
	}
	// Output:
	// "open fridge 1" → "open fridge 1" (0)
	// " \"Go to countertop 1.\" " → "go to countertop 1" (1)
	// "I think I should look around" → "I think I should look around" (-1)
}

// The default template renders a turn as the system message, the earlier
// turns and the current observation with the admissible actions.
func ExampleRenderer_Render() {
	r, err := llm.NewRenderer(llm.Template{})
	if err != nil {
		panic(err)
	}
	msgs, err := r.Render(&policy.State{
		Instruction: "Your task is to: put a cool apple in fridge.",
		History:     []policy.Turn{{Observation: "You see a fridge 1.", Action: "go to fridge 1"}},
		Observation: "The fridge 1 is closed.",
		Admissible:  []string{"open fridge 1", "look"},
	})
	if err != nil {
		panic(err)
	}
	for _, m := range msgs[1:] {
		fmt.Printf("[%s]\n%s\n", m.Role, m.Content)
	}
	// Output:
	// [user]
	// Task: Your task is to: put a cool apple in fridge.
	//
	// Observation:
	// You see a fridge 1.
	// [assistant]
	// go to fridge 1
	// [user]
	// Observation:
	// The fridge 1 is closed.
	//
	// Admissible actions:
	// - open fridge 1
	// - look
	//
	// Answer with exactly one admissible action.
}
