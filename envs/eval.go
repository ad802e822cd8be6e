package envs

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
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

// EvalOptions tunes Evaluate.
type EvalOptions struct {
	// Episodes is the number of episodes to run, cycling through the tasks
	// in order (so 5,000 episodes over 140 tasks runs each task 35 or 36
	// times). Zero runs each task once.
	Episodes int
	// Seed seeds the per-episode random sources handed to the agent:
	// episode i uses a PCG stream of (Seed, i), so results do not depend on
	// anything but the tasks, the agent, Seed and Episodes.
	Seed int64
}

// Stats summarises a set of episodes.
type Stats struct {
	// Episodes is the number of episodes.
	Episodes int `json:"episodes"`
	// Successes counts episodes whose task was completed.
	Successes int `json:"successes"`
	// SuccessRate is Successes / Episodes.
	SuccessRate float64 `json:"success_rate"`
	// MeanScore is the mean outcome reward.
	MeanScore float64 `json:"mean_score"`
	// MeanSteps is the mean number of actions per episode.
	MeanSteps float64 `json:"mean_steps"`
	// InadmissibleRate is the fraction of actions that were not admissible.
	InadmissibleRate float64 `json:"inadmissible_rate"`

	score, steps, inadmissible float64
}

// add folds one finished episode into s.
func (s *Stats) add(success bool, score float64, steps, inadmissible int) {
	s.Episodes++
	if success {
		s.Successes++
	}
	s.score += score
	s.steps += float64(steps)
	s.inadmissible += float64(inadmissible)
	n := float64(s.Episodes)
	s.SuccessRate = float64(s.Successes) / n
	s.MeanScore = s.score / n
	s.MeanSteps = s.steps / n
	if s.steps > 0 {
		s.InadmissibleRate = s.inadmissible / s.steps
	}
}

// Report is the result of an evaluation, overall and per task type.
type Report struct {
	// Env is the environment's name.
	Env string `json:"env"`
	// Overall covers every episode.
	Overall Stats `json:"overall"`
	// ByType holds one entry per task type that occurred, keyed by type.
	ByType map[string]Stats `json:"by_type"`
	// Types lists the keys of ByType in the environment's TaskTypes order.
	Types []string `json:"types"`
}

// Evaluate runs agent on tasks of env and summarises the outcomes. It stops
// early with ctx's error when ctx ends, and fails on the first error of the
// environment or the agent (wrapped with the task id).
func Evaluate(ctx context.Context, env Env, tasks []Task, agent Agent, opts EvalOptions) (Report, error) {
	if len(tasks) == 0 {
		return Report{}, errors.New("envs: evaluate: no tasks")
	}
	if opts.Episodes < 0 {
		return Report{}, fmt.Errorf("envs: evaluate: episodes must be ≥ 0, got %d", opts.Episodes)
	}
	episodes := opts.Episodes
	if episodes == 0 {
		episodes = len(tasks)
	}
	rep := Report{Env: env.Name(), ByType: map[string]Stats{}}
	for i := range episodes {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		task := tasks[i%len(tasks)]
		rng := rand.New(rand.NewPCG(uint64(opts.Seed), uint64(i)))
		ep, inadmissible, err := RunEpisode(env, task, agent, rng)
		if err != nil {
			return rep, err
		}
		rep.Overall.add(ep.Success(), ep.Outcome(), ep.Steps(), inadmissible)
		st := rep.ByType[task.Type]
		st.add(ep.Success(), ep.Outcome(), ep.Steps(), inadmissible)
		rep.ByType[task.Type] = st
	}
	rep.Types = orderedTypes(env.TaskTypes(), rep.ByType)
	return rep, nil
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

// orderedTypes lists the types present in byType: known types first in
// their declared order, then any others sorted by name.
func orderedTypes(known []string, byType map[string]Stats) []string {
	out := make([]string, 0, len(byType))
	seen := make(map[string]bool, len(byType))
	for _, t := range known {
		if _, ok := byType[t]; ok {
			out = append(out, t)
			seen[t] = true
		}
	}
	var rest []string
	for t := range byType {
		if !seen[t] {
			rest = append(rest, t)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}
