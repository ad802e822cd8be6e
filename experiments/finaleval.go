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

// finalEvalFile caches a run's final evaluation beside its cost record:
// the success rate per eval split. finalTypesFile caches the same
// evaluation's success rate per task type on the first eval split (a file
// of its own, so that runs evaluated before it existed keep their figures
// and gain it when their policy can be evaluated again).
const (
	finalEvalFile  = "final-eval.json"
	finalTypesFile = "final-eval-types.json"
)

// finalTypes is the content of finalTypesFile.
type finalTypes struct {
	Split string             `json:"split"`
	Types map[string]float64 `json:"types"`
	// Missing says why Types is empty: the run's policy no longer scores
	// its cached figure. Remembered, so that later aggregations do not
	// evaluate the policy again to learn the same.
	Missing string `json:"missing,omitempty"`
}

// finalEval evaluates the run's final policy (policy.rspo in its report
// directory) on
// FinalEvalEpisodes episodes of each split the run evaluated, sampling as
// the run's evaluations did (greedy when the run's were), and caches the
// success rates in the run directory, with those per task type on the
// run's first split (run.FinalTypes). A run without a policy file gets
// none, and so does one whose policy this build cannot load (a snapshot of
// an older policy format): its figure is left out, not the suite; a
// cached figure stays. "train" evaluations, drawn from held-out train
// tasks, are left out.
func (r *Runner) finalEval(ctx context.Context, runDir, reportDir string, run *RunResult, cfg RunConfig) error {
	cache, typesCache := filepath.Join(runDir, finalEvalFile), filepath.Join(runDir, finalTypesFile)
	var splits map[string]float64
	var types finalTypes
	haveSplits := readJSONFile(cache, &splits) == nil
	if haveSplits && readJSONFile(typesCache, &types) == nil {
		run.FinalEval, run.FinalTypes = splits, types.Types // nil when Missing
		return nil
	}
	run.FinalEval = splits
	raw, err := os.ReadFile(filepath.Join(reportDir, "policy.rspo"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	p, err := policy.Load(raw)
	if err != nil {
		r.logf("%s: final policy not evaluated: %v\n", run.Run, err)
		return nil
	}
	env, err := envs.New(cfg.Env, cfg.EnvOptions)
	if err != nil {
		return err
	}
	fresh := map[string]float64{}
	for _, split := range run.Splits() {
		if split == envs.SplitTrain || (haveSplits && split != run.FirstSplit) {
			continue // a cached run needs its first split again, for the types
		}
		tasks, err := env.Tasks(split, 0, 0)
		if err != nil {
			return fmt.Errorf("experiments: %s split %s: %w", run.Run, split, err)
		}
		rep, err := rollout.Evaluate(ctx, env, tasks, policy.NewAgent(p, cfg.EvalGreedy),
			rollout.EvalOptions{Episodes: FinalEvalEpisodes, Seed: 1})
		if err != nil {
			return fmt.Errorf("experiments: %s split %s: %w", run.Run, split, err)
		}
		fresh[split] = rep.Overall.SuccessRate
		if split == run.FirstSplit {
			types = finalTypes{Split: split, Types: map[string]float64{}}
			for t, st := range rep.ByType {
				types.Types[t] = st.SuccessRate
			}
		}
	}
	if haveSplits {
		// The evaluation is deterministic: the first split must score as
		// cached, or the types would not be those of the cached figure.
		if got, want := fresh[run.FirstSplit], splits[run.FirstSplit]; got != want {
			why := fmt.Sprintf("the final policy scores %.4f on %s, cached %.4f", got, run.FirstSplit, want)
			r.logf("%s: %s: its task types left out (remembered in %s)\n", run.Run, why, typesCache)
			return writeJSONFile(typesCache, finalTypes{Split: run.FirstSplit, Missing: why})
		}
	} else {
		splits = fresh
		if err := writeJSONFile(cache, splits); err != nil {
			return err
		}
	}
	run.FinalEval = splits
	if types.Types != nil {
		run.FinalTypes = types.Types
		return writeJSONFile(typesCache, types)
	}
	return nil
}
