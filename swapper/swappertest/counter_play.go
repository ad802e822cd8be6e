package swappertest

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/schemas"
)

// PlayCounter plays actions in the counter environment for the task with
// seed and returns the explorer trajectory an honest producer would publish:
// dense labels in Reward and DenseReward, the state key before each action,
// and the episode's outcome.
func PlayCounter(t testing.TB, seed int64, actions ...string) *schemas.Trajectory {
	t.Helper()
	env, err := envs.New(CounterEnv, nil)
	if err != nil {
		t.Fatal(err)
	}
	tasks, _ := env.Tasks(envs.SplitTrain, 1, seed)
	ep, err := env.Reset(tasks[0])
	if err != nil {
		t.Fatal(err)
	}
	tr := &schemas.Trajectory{
		ID: fmt.Sprintf("r/c1/explore/x/%d", seed), Run: "r", Cycle: 1, Source: schemas.SourceExplore,
		PolicyVersion: 3, Producer: "x", Seq: uint64(seed), Env: CounterEnv,
		TaskID: tasks[0].ID, TaskType: tasks[0].Type, TaskSeed: seed, Split: tasks[0].Split,
		GroupID: "g", CreatedAt: time.Unix(1700000000, 0).UTC(),
	}
	for i, a := range actions {
		dense := 0.1 * float64(i+1)
		tr.Steps = append(tr.Steps, schemas.Step{
			Observation: ep.Observation(), Admissible: []string{"inc", "dec", "stop"}, NumAdmissible: 3,
			Action: a, ActionIndex: counterActionIndex(a), BehaviorLogProb: -math.Log(3) - 0.01*float64(i),
			Reward: dense, DenseReward: dense, StateKey: ep.StateKey(),
		})
		if _, err := ep.Step(a); err != nil {
			t.Fatalf("play %v: %v", actions, err)
		}
	}
	if ep.Done() {
		tr.OutcomeReward, tr.Success = ep.Outcome(), ep.Success()
	}
	return tr
}

func counterActionIndex(a string) int32 {
	for i, x := range []string{"inc", "dec", "stop"} {
		if a == x {
			return int32(i)
		}
	}
	return -1
}
