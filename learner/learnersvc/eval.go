package learnersvc

import (
	"context"
	"fmt"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
)

// evaluate runs π_θ on every eval split, in-process or in shards played by
// the actors (EvalShards; evaluation steps are not training steps and are
// not counted in the environment-step budget),
// publishes one "eval" metrics event per split and returns the headline
// figures, prefixed by split ("eval_in_distribution_success_rate") and, for
// the first split, also as "eval_success_rate" and "eval_score". An
// environment whose outcome is its success (envs.BinaryOutcome) gets no
// "_score" figures: they would only repeat the success rates.
func (s *Service) evaluate(ctx context.Context) (map[string]float64, error) {
	out := map[string]float64{}
	if !s.canEvaluate() {
		return out, nil
	}
	s.cfg.Logger.Info("evaluating", "update", s.cp.Update, "policy_version", s.cp.Version,
		"episodes", s.cfg.EvalEpisodes, "splits", len(s.cfg.EvalSplits), "shards", s.cfg.EvalShards)
	reports, err := s.evalReports(ctx)
	if err != nil {
		return nil, err
	}
	b, ok := s.env.(envs.BinaryOutcome)
	graded := !ok || !b.BinaryOutcome()
	for i, split := range s.cfg.EvalSplits {
		vals := evalFigures(reports[i], s.cp)
		s.metrics(ctx, schemas.MetricsEvent{Component: "learner", Kind: "eval", Cycle: s.cycleOf(max(0, s.cp.Update-1)),
			Values: vals, Labels: map[string]string{"split": split}, ID: fmt.Sprintf("eval/u%d/%s", s.cp.Update, split)})
		out[split+"_success_rate"] = vals["success_rate"]
		if i == 0 {
			out["eval_success_rate"] = vals["success_rate"]
		}
		if graded {
			out[split+"_score"] = vals["score"]
			if i == 0 {
				out["eval_score"] = vals["score"]
			}
		}
	}
	s.cfg.Logger.Info("evaluated", "update", s.cp.Update, "figures", out)
	return out, nil
}

// evalReports evaluates every eval split, in EvalSplits order: in-process
// one split after the other, or, with EvalShards ≥ 2, by the run's actors
// (evalshards.go), every split's shards queued at once.
func (s *Service) evalReports(ctx context.Context) ([]rollout.Report, error) {
	if s.cfg.EvalShards > 1 {
		return s.evaluateSharded(ctx)
	}
	reports := make([]rollout.Report, len(s.cfg.EvalSplits))
	for i, split := range s.cfg.EvalSplits {
		rep, err := s.evaluateSplit(ctx, split)
		if err != nil {
			return nil, err
		}
		reports[i] = rep
	}
	return reports, nil
}

// evalEpisodes returns the tasks of a split's evaluation, one an episode,
// and its seed: what every evaluation of the split plays, in-process or
// in shards.
func (s *Service) evalEpisodes(split string) ([]envs.Task, int64, error) {
	tasks, err := s.evalTasks(split)
	if err != nil {
		return nil, 0, fmt.Errorf("learnersvc: eval split %s: %w", split, err)
	}
	if len(tasks) == 0 {
		return nil, 0, fmt.Errorf("learnersvc: eval split %s has no tasks", split)
	}
	if split != envs.SplitTrain { // a fixed split: a sample with its task mix, not its first tasks
		tasks = rollout.EvalSample(tasks, s.cfg.EvalEpisodes, rollout.EpisodeSeed(s.cfg.Seed, "eval-sample", split))
	}
	return tasks, rollout.EpisodeSeed(s.cfg.Seed, "eval", split), nil
}

// evaluateSplit plays the split's evaluation in-process with the one
// evaluator every caller uses (rollout.Evaluate).
func (s *Service) evaluateSplit(ctx context.Context, split string) (rollout.Report, error) {
	tasks, seed, err := s.evalEpisodes(split)
	if err != nil {
		return rollout.Report{}, err
	}
	parallel := s.cfg.Parallel
	if parallel <= 0 {
		parallel = rollout.DefaultParallel()
	}
	var agent envs.Agent = policy.NewAgent(s.pol, s.cfg.EvalGreedy)
	if s.cfg.EvalAgent != nil {
		// The checkpoint's version: with an external trainer whose weights
		// are not a built-in policy, s.pol stays the last built-in one.
		if agent, err = s.cfg.EvalAgent(ctx, s.cp.Version, s.pol, s.cfg.EvalGreedy); err != nil {
			return rollout.Report{}, fmt.Errorf("learnersvc: eval agent of version %d: %w", s.cp.Version, err)
		}
	}
	rep, err := rollout.Evaluate(ctx, s.env, tasks, agent, rollout.EvalOptions{
		Episodes: len(tasks), Seed: seed, Parallel: parallel})
	if err != nil {
		return rollout.Report{}, fmt.Errorf("learnersvc: eval on %s: %w", split, err)
	}
	return rep, nil
}

// evalTasks returns a split's tasks. "train" means n fresh train tasks
// drawn with a seed of their own, never one of the update draws: the way to
// evaluate a preset whose task mix differs from the fixed eval splits'.
func (s *Service) evalTasks(split string) ([]envs.Task, error) {
	if split == envs.SplitTrain {
		return s.env.Tasks(split, s.cfg.EvalEpisodes, rollout.EpisodeSeed(s.cfg.Seed, "eval-train-tasks"))
	}
	return s.env.Tasks(split, 0, s.cfg.Seed)
}

// evalFigures summarises an evaluation overall and per task type, with
// the training environment steps spent so far for the compute-fair x axis.
func evalFigures(rep rollout.Report, cp Checkpoint) map[string]float64 {
	all := rep.Overall
	vals := map[string]float64{
		"success_rate": all.SuccessRate, "score": all.MeanScore, "steps": all.MeanSteps,
		"episodes": float64(all.Episodes), "env_steps": float64(cp.EnvStepsActor + cp.EnvStepsExplorer),
		"env_steps_actor": float64(cp.EnvStepsActor), "env_steps_explorer": float64(cp.EnvStepsExplorer),
	}
	for typ, st := range rep.ByType {
		vals["success_"+typ] = st.SuccessRate
	}
	return vals
}
