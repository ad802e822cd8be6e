package learner

import (
	"context"
	"fmt"
	"testing"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/policy/policytest"
	"github.com/rspo-dev/rspo/schemas"
)

func smallPolicy(t testing.TB, seed int64) *policy.Policy {
	t.Helper()
	p, err := policy.New(policy.Config{Buckets: 256, EmbedDim: 3, Hidden: 4, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// collect rolls out n episodes of each task with p, grouped per task.
func collect(t testing.TB, env envs.Env, tasks []envs.Task, p *policy.Policy, n int, seed int64, src schemas.Source) []*schemas.Trajectory {
	t.Helper()
	var out []*schemas.Trajectory
	for i, task := range tasks {
		for j := range n {
			tr, err := policy.Rollout(context.Background(), env, task, p, policy.RolloutOptions{
				Seed: seed*1_000_000 + int64(i*1000+j), GroupID: fmt.Sprintf("%s/%d", task.ID, seed), Source: src})
			if err != nil {
				t.Fatal(err)
			}
			if src == schemas.SourceExplore {
				tr.Swapped = true
			}
			out = append(out, tr)
		}
	}
	return out
}

func courierTasks(t testing.TB, n int, seed int64) (envs.Env, []envs.Task) {
	t.Helper()
	env := policytest.Courier{}
	tasks, err := env.Tasks(envs.SplitTrain, n, seed)
	if err != nil {
		t.Fatal(err)
	}
	return env, tasks
}

// fakeTrajectory is a hand-made trajectory of the given outcome whose steps
// choose among three actions.
func fakeTrajectory(id, task, group string, success bool, steps int) *schemas.Trajectory {
	tr := &schemas.Trajectory{ID: id, TaskID: task, GroupID: group, Instruction: "bring the coin to the chest.", Source: schemas.SourceOnPolicy, Success: success}
	for i := range steps {
		tr.Steps = append(tr.Steps, schemas.Step{
			Observation: fmt.Sprintf("You arrive at room %d.", i+1), Admissible: []string{"go to room 1", "take coin 1 from room 2", "look"},
			NumAdmissible: 3, Action: "look", ActionIndex: 2, BehaviorLogProb: -1.0986122886681098, StateKey: uint64(i + 1),
		})
	}
	if success {
		tr.OutcomeReward = 1
		tr.Steps[steps-1].Reward = 1
	}
	return tr
}
