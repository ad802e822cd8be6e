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

// An evaluation played in parts — each part its episodes' tasks and its
// first episode's number, as evaluation shards carry them — reports, once
// the parts' results are folded in episode order, exactly what the whole
// evaluation does, to the bit (reflect.DeepEqual sees the unexported sums).
func TestEvaluationInPartsMatchesTheWhole(t *testing.T) {
	env, err := envs.New("household", map[string]string{"preset": "easy"})
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := env.Tasks(envs.SplitTrain, 30, 7)
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.New(policy.Config{Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	opts := rollout.EvalOptions{Episodes: len(tasks), Seed: 11, Parallel: 2}
	whole, err := rollout.Evaluate(context.Background(), env, tasks, policy.NewAgent(p, false), opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, cuts := range [][]int{{0, 30}, {0, 15, 30}, {0, 10, 20, 30}, {0, 1, 29, 30}} {
		var all []rollout.EpisodeResult
		for k := 1; k < len(cuts); k++ {
			lo, hi := cuts[k-1], cuts[k]
			part, err := rollout.EvaluateEpisodes(context.Background(), env, tasks[lo:hi], policy.NewAgent(p, false),
				rollout.EvalOptions{Seed: opts.Seed, Parallel: 1, First: lo})
			if err != nil {
				t.Fatal(err)
			}
			if len(part) != hi-lo {
				t.Fatalf("part [%d, %d): %d results", lo, hi, len(part))
			}
			all = append(all, part...)
		}
		if got := rollout.NewReport(env, all); !reflect.DeepEqual(got, whole) {
			t.Errorf("parts %v: got %+v, want the whole evaluation's %+v", cuts, got, whole)
		}
	}
	if whole.Overall.Successes == 0 && whole.Overall.MeanSteps == 0 {
		t.Errorf("a degenerate evaluation compares nothing: %+v", whole.Overall)
	}
}
