package policy_test

import (
	"context"
	"testing"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/policy/policytest"
	"github.com/rspo-dev/rspo/rollout"
)

// TestAgentMatchesRollout: the evaluation adapter sees the same history as
// Rollout, so greedy play gives the same episode both ways.
func TestAgentMatchesRollout(t *testing.T) {
	env := policytest.Courier{}
	tasks, _ := env.Tasks(envs.SplitEvalIn, 5, 0)
	p := randomPolicy(t)
	// Give the policy opinions, so that greedy play depends on the features.
	for i := range p.NumParams() {
		p.SetParam(i, p.Param(i)+float64(i%7-3)*0.05)
	}
	agent := policy.NewAgent(p, true)
	for _, task := range tasks {
		ep, _, err := envs.RunEpisode(env, task, agent, nil)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := policy.Rollout(context.Background(), env, task, p, policy.RolloutOptions{Greedy: true})
		if err != nil {
			t.Fatal(err)
		}
		if ep.Steps() != len(tr.Steps) || ep.Success() != tr.Success {
			t.Fatalf("%s: agent took %d steps (success %v), rollout %d (success %v)", task.ID, ep.Steps(), ep.Success(), len(tr.Steps), tr.Success)
		}
	}
	rep, err := rollout.Evaluate(context.Background(), env, tasks, policy.NewAgent(p, false), rollout.EvalOptions{Seed: 1})
	if err != nil || rep.Overall.Episodes != len(tasks) {
		t.Fatalf("Evaluate: %+v %v", rep.Overall, err)
	}
}

// A tilted agent plays what a tilted rollout plays: evaluating a PRM's
// steering (`rspo eval --tilt-prm`) measures the explorer's behaviour.
func TestTiltedAgentMatchesTiltedRollout(t *testing.T) {
	env := policytest.Courier{}
	tasks, _ := env.Tasks(envs.SplitEvalIn, 5, 0)
	p := randomPolicy(t)
	agent := policy.NewAgent(p, true).WithTilt(byLength, 3)
	changed := 0
	for _, task := range tasks {
		ep, _, err := envs.RunEpisode(env, task, agent, nil)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := policy.Rollout(context.Background(), env, task, p, policy.RolloutOptions{Greedy: true, Tilt: byLength, TiltStrength: 3})
		if err != nil {
			t.Fatal(err)
		}
		untilted, err := policy.Rollout(context.Background(), env, task, p, policy.RolloutOptions{Greedy: true})
		if err != nil {
			t.Fatal(err)
		}
		if ep.Steps() != len(tr.Steps) || ep.Success() != tr.Success {
			t.Fatalf("%s: agent took %d steps (success %v), tilted rollout %d (success %v)", task.ID, ep.Steps(), ep.Success(), len(tr.Steps), tr.Success)
		}
		for i := range min(len(tr.Steps), len(untilted.Steps)) {
			if tr.Steps[i].Action != untilted.Steps[i].Action {
				changed++
				break
			}
		}
	}
	if changed == 0 {
		t.Fatal("the tilt changed no episode: the check would not see a missing tilt")
	}
}
