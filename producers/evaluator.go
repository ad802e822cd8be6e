package producers

import (
	"context"
	"errors"
	"fmt"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// An EvalBackend is a Backend that can also play evaluations: it hands
// out the agent of version v that rollout.EvaluateEpisodes plays, as the
// learner's in-process evaluation would build it (policy.NewAgent for the
// built-in policy, llm's agent for a served one). An actor whose backend
// is not one dead-letters evaluation shards with the reason.
type EvalBackend interface {
	Backend
	EvalAgent(ctx context.Context, v int64, greedy bool) (envs.Agent, error)
}

var _ EvalBackend = (*PolicyCache)(nil)

// EvalAgent returns the built-in policy of version v as an evaluation
// agent, greedy or sampling.
func (c *PolicyCache) EvalAgent(ctx context.Context, v int64, greedy bool) (envs.Agent, error) {
	p, err := c.Get(ctx, v)
	if err != nil {
		return nil, err
	}
	return policy.NewAgent(p, greedy), nil
}

// EvaluatorDurable names the work-queue consumer of evaluation shards
// (rspo.<run>.work.eval) that run's actors share: each shard is played by
// one of them.
func EvaluatorDurable(run string) string { return "evaluators-" + run }

// runEvaluator serves evaluation shards until ctx ends.
func (a *Actor) runEvaluator(ctx context.Context) error {
	return streams.Consume(ctx, a.js, streams.ConsumerConfig{
		Stream:        streams.StreamWork,
		Durable:       EvaluatorDurable(a.cfg.Run),
		FilterSubject: streams.Subjects(a.cfg.Run).WorkEval,
		Component:     Component,
		Batch:         1,
		AckWait:       a.cfg.AckWait,
		Logger:        a.cfg.Logger,
		Counters:      a.cfg.Counters,
	}, streams.Typed(streams.EvalShards, a.cfg.Run, a.handleEval))
}

func (a *Actor) handleEval(ctx context.Context, d streams.Delivery[schemas.EvalShard]) error {
	defer keepAlive(ctx, d.Msg, a.cfg.AckWait/3)()
	res, err := a.Evaluate(ctx, d.Value)
	if err != nil {
		return err
	}
	if _, err := streams.PublishEvalResult(ctx, a.js, res); err != nil {
		return err
	}
	a.cfg.Logger.Debug("eval shard played", "update", res.Update, "split", res.Split, "shard", res.Shard,
		"shards", res.Shards, "episodes", len(res.Results))
	return nil
}

// Evaluate plays the episodes of an evaluation shard and returns its
// result: what each episode scored, as the learner's in-process
// evaluation of the same episodes would (rollout.EvaluateEpisodes with the
// shard's first episode, seed and tasks). A shard no retry can serve (an
// unknown environment, a backend that cannot evaluate, more steps than the
// actor's budget) is returned as a rejection.
func (a *Actor) Evaluate(ctx context.Context, sh schemas.EvalShard) (schemas.EvalResult, error) {
	eb, ok := a.backend.(EvalBackend)
	if !ok {
		return schemas.EvalResult{}, streams.Rejectf("this actor's policy backend (%T) cannot play evaluations: serve the run's evaluation shards with actors of the built-in or the openai policy, or evaluate in the learner (--eval-shards 1)", a.backend)
	}
	env, err := a.envs.Get(sh.Env, sh.EnvOptions)
	if err != nil {
		return schemas.EvalResult{}, streams.Reject(err)
	}
	if steps := int64(len(sh.Tasks)) * stepLimit(env); steps > a.cfg.StepBudget {
		return schemas.EvalResult{}, streams.Rejectf("eval shard %d of %s at update %d asks for up to %d environment steps (%d episodes × %d steps), over the actor's budget of %d",
			sh.Shard, sh.Split, sh.Update, steps, len(sh.Tasks), stepLimit(env), a.cfg.StepBudget)
	}
	agent, err := eb.EvalAgent(ctx, sh.PolicyVersion, sh.Greedy)
	if err != nil {
		return schemas.EvalResult{}, err // the version may not be visible yet: retry
	}
	tasks := make([]envs.Task, len(sh.Tasks))
	for i, t := range sh.Tasks {
		tasks[i] = rollout.TaskOf(t)
	}
	results, err := rollout.EvaluateEpisodes(ctx, env, tasks, agent, rollout.EvalOptions{
		Seed: sh.Seed, Parallel: a.cfg.Parallel, First: sh.EpisodeStart})
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, rollout.ErrUnavailable) {
			return schemas.EvalResult{}, err
		}
		return schemas.EvalResult{}, streams.Reject(fmt.Errorf("producers: eval shard %d of %s at update %d: %w", sh.Shard, sh.Split, sh.Update, err))
	}
	return schemas.EvalResult{Run: sh.Run, Update: sh.Update, PolicyVersion: sh.PolicyVersion, Split: sh.Split,
		Shard: sh.Shard, Shards: sh.Shards, EpisodeStart: sh.EpisodeStart, EpisodeEnd: sh.EpisodeEnd, Episodes: sh.Episodes,
		Evaluator: a.cfg.Name, Nonce: sh.Nonce, Results: rollout.EvalEpisodes(results)}, nil
}
