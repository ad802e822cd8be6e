// Package prmtest makes synthetic trajectories for tests of the PRM and of
// its users: a world where the outcome is decided by one particular step.
package prmtest

import (
	"fmt"
	"math/rand/v2"

	"github.com/rspo-dev/rspo/schemas"
)

// NeutralActions are the actions that do not affect the outcome.
var NeutralActions = []string{
	"look around", "wait", "check inventory", "go to desk 1", "go to shelf 2",
	"open drawer 3", "close drawer 3", "examine lamp 1", "go to bed 1",
}

// The decisive actions: pressing the red button succeeds, the blue one fails.
const (
	SuccessAction = "press red button"
	FailureAction = "press blue button"
)

// Decisive returns n trajectories of run, each a walk of steps neutral
// actions with one decisive step at a random position: SuccessAction
// (outcome 1, success) or FailureAction (outcome 0), with equal chance.
// decisive[i] is the index of trajectory i's decisive step. The trajectories
// pass schemas validation; ids are "<run>-<seed>-<i>".
func Decisive(run string, seed uint64, n, steps int) (trajs []*schemas.Trajectory, decisive []int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	trajs = make([]*schemas.Trajectory, n)
	decisive = make([]int, n)
	for i := range trajs {
		trajs[i], decisive[i] = one(rng, fmt.Sprintf("%s-%d-%d", run, seed, i), run, steps)
	}
	return trajs, decisive
}

func one(rng *rand.Rand, id, run string, steps int) (*schemas.Trajectory, int) {
	success := rng.IntN(2) == 0
	decisive := rng.IntN(steps)
	t := &schemas.Trajectory{
		ID: id, Run: run, Source: schemas.SourceOnPolicy, Producer: "prmtest",
		Env: "synthetic", TaskID: "synthetic/train/" + id, TaskType: "press", Split: "train",
		Instruction: "your task is to press the correct button", GroupID: id,
		Success: success,
	}
	if success {
		t.OutcomeReward = 1
	}
	for k := range steps {
		action := NeutralActions[rng.IntN(len(NeutralActions))]
		if k == decisive {
			action = FailureAction
			if success {
				action = SuccessAction
			}
		}
		t.Steps = append(t.Steps, schemas.Step{
			Observation: fmt.Sprintf("You are in room %d. You see a red button and a blue button.", rng.IntN(5)),
			Action:      action,
			ActionIndex: -1,
			StateKey:    uint64(k),
		})
	}
	t.Steps[len(t.Steps)-1].Reward = t.OutcomeReward
	t.DistinctStates = int32(steps)
	return t, decisive
}
