package rollout

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
)

// AgentPlayer plays with any envs.Agent — the environment's expert
// (envs.NewExpertAgent), a scripted agent — and records the episode as a
// policy's rollout is recorded, so its trajectories serve as
// demonstrations (learner.SFT). The agent's choice is taken as certain:
// every behaviour log-prob is 0. The agent must be safe for concurrent
// use when All plays several episodes at once.
type AgentPlayer struct{ Agent envs.Agent }

var _ Player = AgentPlayer{}

// Play plays ep with the agent, drawing from the episode's own random
// source (policy.RolloutRand of its seed). An agent that names an action
// outside the admissible list fails the episode.
func (p AgentPlayer) Play(ctx context.Context, env envs.Env, ep Episode) (*schemas.Trajectory, error) {
	e, err := env.Reset(ep.Task)
	if err != nil {
		return nil, fmt.Errorf("rollout: reset %s: %w", ep.Task.ID, err)
	}
	t := policy.NewTrajectory(env, ep.Task, 0, ep.Opts)
	rng := policy.RolloutRand(ep.Opts.Seed)
	maxSteps := ep.Opts.MaxSteps
	if maxSteps <= 0 {
		maxSteps = policy.DefaultMaxSteps
	}
	for !e.Done() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(t.Steps) >= maxSteps {
			return nil, fmt.Errorf("rollout: %s: %w (%d)", ep.Task.ID, policy.ErrEpisodeTooLong, maxSteps)
		}
		adm, obs, key := slices.Clone(e.Admissible()), e.Observation(), e.StateKey()
		action, err := p.Agent.Act(e, rng)
		if err != nil {
			return nil, fmt.Errorf("rollout: agent in %s at step %d: %w", ep.Task.ID, len(t.Steps), err)
		}
		idx := slices.Index(adm, action)
		if idx < 0 {
			return nil, fmt.Errorf("rollout: agent in %s at step %d chose %q, not an admissible action", ep.Task.ID, len(t.Steps), action)
		}
		res, err := e.Step(action)
		if err != nil {
			return nil, fmt.Errorf("rollout: step %d of %s: %w", len(t.Steps), ep.Task.ID, err)
		}
		t.Steps = append(t.Steps, schemas.Step{Observation: obs, Admissible: adm, NumAdmissible: int32(len(adm)),
			Action: action, ActionIndex: int32(idx), Reward: res.Reward, StateKey: key})
	}
	t.OutcomeReward, t.Success = e.Outcome(), e.Success()
	t.CreatedAt = time.Now()
	if ep.Opts.Clock != nil {
		t.CreatedAt = ep.Opts.Clock()
	}
	return t, nil
}
