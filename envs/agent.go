package envs

import (
	"errors"
	"fmt"
	"math/rand/v2"
)

// Agent chooses the next action of an episode. The trained policy, the
// uniform random baseline and the expert planner all implement it, so one
// evaluation loop serves them all. An Agent used by Evaluate is called from
// one goroutine at a time.
type Agent interface {
	// Act returns the action to take in ep's current state. rng is the
	// episode's own random source; agents that sample must draw from it so
	// that evaluations are reproducible.
	Act(ep Episode, rng *rand.Rand) (string, error)
}

// ErrNoPlanner means an expert agent was requested for an environment that
// does not implement Planner.
var ErrNoPlanner = errors.New("envs: environment has no expert planner")

// ErrNoActions means an agent found no admissible action in a running episode.
var ErrNoActions = errors.New("envs: no admissible actions")

// RandomAgent picks uniformly among the admissible actions: the lower
// reference of every evaluation.
type RandomAgent struct{}

var _ Agent = RandomAgent{}

// Act returns a uniformly chosen admissible action, or ErrNoActions.
func (RandomAgent) Act(ep Episode, rng *rand.Rand) (string, error) {
	acts := ep.Admissible()
	if len(acts) == 0 {
		return "", fmt.Errorf("%w in task %s", ErrNoActions, ep.Task().ID)
	}
	return acts[rng.IntN(len(acts))], nil
}

// ExpertAgent follows an environment's Planner, which sees the hidden state:
// the upper reference of every evaluation.
type ExpertAgent struct {
	planner Planner
}

var _ Agent = (*ExpertAgent)(nil)

// NewExpertAgent returns the expert of env, or ErrNoPlanner.
func NewExpertAgent(env Env) (*ExpertAgent, error) {
	p, ok := env.(Planner)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoPlanner, env.Name())
	}
	return &ExpertAgent{planner: p}, nil
}

// Act returns the planner's next action; rng is not used.
func (a *ExpertAgent) Act(ep Episode, _ *rand.Rand) (string, error) {
	return a.planner.ExpertAction(ep)
}

// RunEpisode plays one episode of task with agent until it ends and returns
// the finished episode and the number of inadmissible actions taken.
func RunEpisode(env Env, task Task, agent Agent, rng *rand.Rand) (Episode, int, error) {
	ep, err := env.Reset(task)
	if err != nil {
		return nil, 0, fmt.Errorf("envs: reset %s: %w", task.ID, err)
	}
	inadmissible := 0
	for !ep.Done() {
		action, err := agent.Act(ep, rng)
		if err != nil {
			return nil, 0, fmt.Errorf("envs: agent in %s at step %d: %w", task.ID, ep.Steps(), err)
		}
		res, err := ep.Step(action)
		if err != nil {
			return nil, 0, fmt.Errorf("envs: step %d of %s: %w", ep.Steps(), task.ID, err)
		}
		if !res.Admissible {
			inadmissible++
		}
	}
	return ep, inadmissible, nil
}
