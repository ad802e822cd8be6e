package household

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/envs"
)

// TestExpertTranscripts pins the observation text: one expert episode per
// task type (the first task of that type in eval_in_distribution, default
// preset), with the first admissible list and the size of each later one.
func TestExpertTranscripts(t *testing.T) {
	env, _ := New(DefaultConfig())
	tasks, _ := env.Tasks(envs.SplitEvalIn, 0, 0)
	for _, typ := range TaskTypes() {
		t.Run(typ, func(t *testing.T) {
			for _, task := range tasks {
				if task.Type == typ {
					golden(t, "transcripts/"+typ+".txt", expertTranscript(t, env, task))
					return
				}
			}
			t.Fatalf("no %s task in %s", typ, envs.SplitEvalIn)
		})
	}
}

// expertTranscript plays the expert on task and writes down everything.
func expertTranscript(t *testing.T, env *Env, task envs.Task) []byte {
	t.Helper()
	ep, err := env.Reset(task)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "task: %s\ntype: %s\nseed: %d\ninstruction: %s\n\n%s\n\nadmissible:\n  %s\n",
		task.ID, task.Type, task.Seed, task.Instruction, ep.Observation(), strings.Join(ep.Admissible(), "\n  "))
	for !ep.Done() {
		a, err := env.ExpertAction(ep)
		if err != nil {
			t.Fatal(err)
		}
		res, err := ep.Step(a)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "\n> %s\n%s\n[reward %v, done %v, %d admissible, state %016x]\n",
			a, res.Observation, res.Reward, res.Done, len(ep.Admissible()), ep.StateKey())
	}
	fmt.Fprintf(&b, "\nsuccess: %v after %d steps\n", ep.Success(), ep.Steps())
	if !ep.Success() {
		t.Errorf("expert failed %s", task.ID)
	}
	return []byte(b.String())
}
