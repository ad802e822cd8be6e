package rollout_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/rspo-dev/rspo/envs"
	_ "github.com/rspo-dev/rspo/envs/household"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/rollout"
)

var _ rollout.Forker = (*policy.Agent)(nil)

// Each episode has its own random source and a policy agent forks per
// worker, so a parallel evaluation reports exactly what a sequential one does.
func TestEvaluateInParallelMatchesSequential(t *testing.T) {
	env, err := envs.New("household", map[string]string{"preset": "easy"})
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := env.Tasks(envs.SplitTrain, 12, 5)
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.New(policy.Config{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	eval := func(parallel int) rollout.Report {
		rep, err := rollout.Evaluate(context.Background(), env, tasks, policy.NewAgent(p, false),
			rollout.EvalOptions{Episodes: 40, Seed: 9, Parallel: parallel})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	seq, par := eval(1), eval(4)
	if !reflect.DeepEqual(seq, par) {
		t.Errorf("parallel evaluation differs:\n got %+v\nwant %+v", par, seq)
	}
	if seq.Overall.Episodes != 40 {
		t.Errorf("episodes: got %d, want 40", seq.Overall.Episodes)
	}
}
