package swapper

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/rspo-dev/rspo/envs"
	_ "github.com/rspo-dev/rspo/envs/household"
	_ "github.com/rspo-dev/rspo/envs/shop"
	"github.com/rspo-dev/rspo/schemas"
)

// playExpert plays the environment's expert on a train task and records the
// trajectory as a producer does: the state key before each action.
func playExpert(t *testing.T, envName string, i int) *schemas.Trajectory {
	t.Helper()
	env, err := envs.New(envName, nil)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := env.Tasks(envs.SplitTrain, 1, int64(100+i))
	if err != nil {
		t.Fatal(err)
	}
	task := tasks[0]
	ep, err := env.Reset(task)
	if err != nil {
		t.Fatal(err)
	}
	tr := &schemas.Trajectory{
		ID: fmt.Sprintf("%s-expert-%d", envName, i), Run: "r", Source: schemas.SourceExplore, Producer: "expert",
		Env: envName, TaskID: task.ID, TaskType: task.Type, TaskSeed: task.Seed, Split: task.Split,
		Instruction: task.Instruction,
	}
	for !ep.Done() {
		a, err := env.(envs.Planner).ExpertAction(ep)
		if err != nil {
			t.Fatal(err)
		}
		tr.Steps = append(tr.Steps, schemas.Step{Action: a, ActionIndex: -1, BehaviorLogProb: -math.Log(2),
			Reward: 0.1, DenseReward: 0.1, StateKey: ep.StateKey()})
		if _, err := ep.Step(a); err != nil {
			t.Fatal(err)
		}
	}
	tr.OutcomeReward, tr.Success = ep.Outcome(), ep.Success()
	return tr
}

func TestVerifyBuiltInEnvironments(t *testing.T) {
	v := NewVerifier(nil)
	for _, name := range []string{"household", "shop"} {
		for i := range 3 {
			t.Run(fmt.Sprint(name, i), func(t *testing.T) {
				honest := playExpert(t, name, i)
				if !honest.Success {
					t.Fatalf("the expert failed task %s", honest.TaskID)
				}
				if err := v.Verify(honest); err != nil {
					t.Fatalf("honest expert trajectory: %v", err)
				}
				// Claim the success with the last action cut off.
				forged := honest.Clone()
				forged.Steps = forged.Steps[:len(forged.Steps)-1]
				if err := v.Verify(forged); !errors.Is(err, ErrForged) {
					t.Errorf("success claimed without the final action: %v, want ErrForged", err)
				}
			})
		}
	}
}
