package experiments

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/rollout"
)

// FinalEvalEpisodes is the number of episodes per eval split on which each
// run's final policy is evaluated after the run: the runs' own periodic
// evaluations use few episodes (32–64) to stay cheap, too few to tell
// apart success rates a few points apart.
const FinalEvalEpisodes = 512

// finalEvalFile caches a run's final evaluation beside its cost record.
const finalEvalFile = "final-eval.json"

// finalEval evaluates the run's final policy (report/policy.rspo) on
// FinalEvalEpisodes episodes of each split the run evaluated, sampling as
// the run's evaluations did (greedy when the run's were), and caches the
// success rates in the run directory. A run without a policy file gets
// none, and so does one whose policy this build cannot load (a snapshot of
// an older policy format): its figure is left out, not the suite.
// "train" evaluations, drawn from held-out train tasks, are left out.
func (r *Runner) finalEval(ctx context.Context, runDir, reportDir string, run *RunResult, cfg RunConfig) (map[string]float64, error) {
	cache := filepath.Join(runDir, finalEvalFile)
	var out map[string]float64
	if err := readJSONFile(cache, &out); err == nil {
		return out, nil
	}
	raw, err := os.ReadFile(filepath.Join(reportDir, "policy.rspo"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	p, err := policy.Load(raw)
	if err != nil {
		r.logf("%s: final policy not evaluated: %v\n", run.Run, err)
		return nil, nil
	}
	env, err := envs.New(cfg.Env, cfg.EnvOptions)
	if err != nil {
		return nil, err
	}
	out = map[string]float64{}
	for _, split := range run.Splits() {
		if split == envs.SplitTrain {
			continue
		}
		tasks, err := env.Tasks(split, 0, 0)
		if err != nil {
			return nil, fmt.Errorf("experiments: %s split %s: %w", run.Run, split, err)
		}
		rep, err := rollout.Evaluate(ctx, env, tasks, policy.NewAgent(p, cfg.EvalGreedy),
			rollout.EvalOptions{Episodes: FinalEvalEpisodes, Seed: 1})
		if err != nil {
			return nil, fmt.Errorf("experiments: %s split %s: %w", run.Run, split, err)
		}
		out[split] = rep.Overall.SuccessRate
	}
	return out, writeJSONFile(cache, out)
}
