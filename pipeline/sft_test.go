package pipeline

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/rollout"
)

// evalSuccess is p's success rate on the first eval split's tasks.
func evalSuccess(t *testing.T, env envs.Env, p *policy.Policy) float64 {
	t.Helper()
	split := env.Splits()[0]
	for _, s := range env.Splits() {
		if s != envs.SplitTrain {
			split = s
			break
		}
	}
	tasks, err := env.Tasks(split, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := rollout.Evaluate(context.Background(), env, rollout.EvalSample(tasks, 128, 1), policy.NewAgent(p, false), rollout.EvalOptions{Episodes: 128, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return rep.Overall.SuccessRate
}

// A policy trained by SFT on the household expert's demonstrations
// succeeds on held-out tasks where the untrained policy does not, and the
// snapshot it writes starts a run.
func TestSFTOnExpertDemosBeatsTheUntrainedPolicy(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a policy")
	}
	opts := SFTOptions{Env: "household", Demos: DemosExpert, Episodes: 256, Seed: 5}
	res, err := SFT(context.Background(), nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Trajectories == 0 || res.EnvSteps == 0 || res.Report.BestEpoch == 0 || !(res.Report.HeldOutLoss < res.Report.StartLoss) {
		t.Fatalf("SFT did not learn: %+v", res)
	}
	env, err := envs.New(opts.Env, opts.EnvOptions)
	if err != nil {
		t.Fatal(err)
	}
	untrained, err := policy.New(policy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	before, after := evalSuccess(t, env, untrained), evalSuccess(t, env, res.Policy)
	if !(after > before+0.1) {
		t.Errorf("held-out success: untrained %.3f, SFT %.3f; want SFT clearly ahead", before, after)
	}
	file := filepath.Join(t.TempDir(), "sft.policy")
	if err := WriteSFT(file, res); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := smallRun(t, dir, false)
	cfg.Learner.Updates, cfg.InitPolicy = 1, file
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.InitPolicy == nil || sum.InitPolicy.EnvSteps != res.EnvSteps || sum.EnvStepsSource != res.EnvSteps {
		t.Errorf("the warm-started run counts %+v and %d source steps; want the demonstrations' %d", sum.InitPolicy, sum.EnvStepsSource, res.EnvSteps)
	}
}

// A recorded run's successful on-policy episodes are demonstrations, and
// its environment steps are their cost.
func TestRunDemosAreARunsSuccesses(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	dir := t.TempDir()
	src := smallRun(t, dir, false)
	src.Learner.Run = "src"
	sum, err := Run(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	demos, steps, err := RunDemos(context.Background(), openStore(t, dir), "src")
	if err != nil {
		t.Fatal(err)
	}
	if steps != sum.EnvSteps {
		t.Errorf("cost %d steps, the run took %d", steps, sum.EnvSteps)
	}
	for _, d := range demos {
		if !d.Success || d.PRMWarmup() {
			t.Fatalf("demonstration %s: success %v, warm-up %v", d.ID, d.Success, d.PRMWarmup())
		}
	}
	if len(demos) == 0 {
		t.Error("no demonstrations from a run that learned (easy preset)")
	}
}

// Demonstrations of a run that is not on the server are refused by name.
func TestRunDemosRefuseAMissingRun(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	dir := t.TempDir()
	src := smallRun(t, dir, false)
	src.Learner.Updates = 1
	if _, err := Run(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	if _, _, err := RunDemos(context.Background(), openStore(t, dir), "nosuch"); err == nil || !strings.Contains(err.Error(), "no such run") {
		t.Errorf("got %v, want a missing run named", err)
	}
}
