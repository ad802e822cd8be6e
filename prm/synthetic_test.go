package prm

import (
	"fmt"
	"math/rand/v2"

	"github.com/rspo-dev/rspo/schemas"
)

// The synthetic world of the tests: every episode is a walk of neutral
// actions with one decisive step, pressing the red button (success) or the
// blue one (failure), at a random position.
var neutralActions = []string{
	"look around", "wait", "check inventory", "go to desk 1", "go to shelf 2",
	"open drawer 3", "close drawer 3", "examine lamp 1", "go to bed 1",
}

// decisiveTrajectory builds one episode; decisive is the index of the step
// that decides the outcome.
func decisiveTrajectory(rng *rand.Rand, id int, steps int) (t *schemas.Trajectory, decisive int) {
	success := rng.IntN(2) == 0
	decisive = rng.IntN(steps)
	t = &schemas.Trajectory{
		ID: fmt.Sprintf("synthetic-%d", id), Run: "test", Source: schemas.SourceOnPolicy,
		Env: "synthetic", TaskID: fmt.Sprintf("synthetic/train/%d", id),
		Instruction: "your task is to press the correct button",
		Success:     success,
	}
	if success {
		t.OutcomeReward = 1
	}
	for k := range steps {
		action := neutralActions[rng.IntN(len(neutralActions))]
		if k == decisive {
			action = "press blue button"
			if success {
				action = "press red button"
			}
		}
		t.Steps = append(t.Steps, schemas.Step{
			Observation: fmt.Sprintf("You are in room %d. You see a red button and a blue button.", rng.IntN(5)),
			Action:      action,
			ActionIndex: -1,
		})
	}
	t.Steps[len(t.Steps)-1].Reward = t.OutcomeReward
	return t, decisive
}

func decisiveSet(seed uint64, n, steps int) ([]*schemas.Trajectory, []int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	trajs := make([]*schemas.Trajectory, n)
	decisive := make([]int, n)
	for i := range trajs {
		trajs[i], decisive[i] = decisiveTrajectory(rng, i, steps)
	}
	return trajs, decisive
}
