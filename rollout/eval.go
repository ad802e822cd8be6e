package rollout

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/rspo-dev/rspo/envs"
)

// Forker is an agent that can hand out independent copies of itself, one
// per evaluation worker. Agents that keep per-episode state (the policy
// agent remembers its episode's turns) implement it so Evaluate can run
// episodes in parallel; stateless agents need not.
type Forker interface {
	envs.Agent
	// Fork returns an agent that acts exactly as the receiver would but
	// shares no mutable state with it.
	Fork() envs.Agent
}

// EvalOptions tunes Evaluate.
type EvalOptions struct {
	// Episodes is the number of episodes to run, cycling through the tasks
	// in order (so 5,000 episodes over 140 tasks runs each task 35 or 36
	// times). Zero runs each task once.
	Episodes int
	// Seed seeds the per-episode random sources handed to the agent:
	// episode i uses a PCG stream of (Seed, i), so results do not depend on
	// anything but the tasks, the agent, Seed and Episodes — not on
	// Parallel or on scheduling.
	Seed int64
	// Parallel is how many episodes run at once. Default 1; an agent that
	// is not a Forker always plays its episodes one at a time.
	Parallel int
	// First is the number of the first episode played, for a part of a
	// larger evaluation (EvaluateEpisodes). Default 0: the whole one.
	First int
}

// Stats summarises a set of episodes.
type Stats struct {
	// Episodes is the number of episodes.
	Episodes int `json:"episodes"`
	// Successes counts episodes whose task was completed.
	Successes int `json:"successes"`
	// SuccessRate is Successes / Episodes.
	SuccessRate float64 `json:"success_rate"`
	// MeanScore is the mean score: the episodes' graded score
	// (envs.Score), their outcome reward where the environment has none.
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

// Evaluate runs agent on tasks of env and summarises the outcomes, overall
// and per task type. Episodes are independent (each has its own random
// source), so the report is the same for any Parallel. It stops early with
// ctx's error when ctx ends, and fails on the first error of the
// environment or the agent (wrapped with the task id).
func Evaluate(ctx context.Context, env envs.Env, tasks []envs.Task, agent envs.Agent, opts EvalOptions) (Report, error) {
	results, err := EvaluateEpisodes(ctx, env, tasks, agent, opts)
	if err != nil {
		return Report{}, err
	}
	return NewReport(env, results), nil
}

// EpisodeResult is what an evaluation keeps of one finished episode.
type EpisodeResult struct {
	// Type is the episode's task type.
	Type string `json:"type"`
	// Success says whether the task was completed; Score is its graded
	// score (envs.Score).
	Success bool    `json:"success"`
	Score   float64 `json:"score"`
	// Steps is the number of actions taken, Inadmissible how many of them
	// were not admissible.
	Steps        int `json:"steps"`
	Inadmissible int `json:"inadmissible"`
}

// EvaluateEpisodes plays the episodes Evaluate would play with the same
// arguments and returns what each scored, in episode order. With
// opts.First f it plays episodes f, f+1, …, f+n−1 of a larger evaluation
// (n is opts.Episodes, or len(tasks) when 0; episode f+j plays
// tasks[j mod len(tasks)] with the random stream (opts.Seed, f+j)): a part
// of an evaluation played elsewhere gives the results the whole
// evaluation would give its episodes.
func EvaluateEpisodes(ctx context.Context, env envs.Env, tasks []envs.Task, agent envs.Agent, opts EvalOptions) ([]EpisodeResult, error) {
	if len(tasks) == 0 {
		return nil, errors.New("rollout: evaluate: no tasks")
	}
	if opts.Episodes < 0 || opts.Parallel < 0 || opts.First < 0 {
		return nil, fmt.Errorf("rollout: evaluate: episodes %d, parallel %d and first %d must be ≥ 0", opts.Episodes, opts.Parallel, opts.First)
	}
	episodes := opts.Episodes
	if episodes == 0 {
		episodes = len(tasks)
	}
	results := make([]EpisodeResult, episodes)
	if err := forEachEpisode(ctx, episodes, workers(agent, opts.Parallel), func(a envs.Agent, j int) error {
		task := tasks[j%len(tasks)]
		rng := rand.New(rand.NewPCG(uint64(opts.Seed), uint64(opts.First+j)))
		ep, inadmissible, err := envs.RunEpisode(env, task, a, rng)
		if err == nil {
			results[j] = EpisodeResult{Type: task.Type, Success: ep.Success(), Score: envs.Score(ep),
				Steps: ep.Steps(), Inadmissible: inadmissible}
		}
		return err
	}); err != nil {
		return nil, err
	}
	return results, nil
}

// NewReport summarises episode results of env, overall and per task type.
// It folds them in the order given, so the results of an evaluation's
// parts, concatenated in episode order, give exactly the report of the
// whole evaluation.
func NewReport(env envs.Env, results []EpisodeResult) Report {
	rep := Report{Env: env.Name(), ByType: map[string]Stats{}}
	for _, r := range results { // in episode order: the sums do not depend on scheduling
		rep.Overall.add(r.Success, r.Score, r.Steps, r.Inadmissible)
		st := rep.ByType[r.Type]
		st.add(r.Success, r.Score, r.Steps, r.Inadmissible)
		rep.ByType[r.Type] = st
	}
	rep.Types = orderedTypes(env.TaskTypes(), rep.ByType)
	return rep
}

// workers returns one agent per worker: agent and parallel−1 forks of it
// when it can fork, else agent alone (an agent that cannot fork may keep
// per-episode state, so its episodes run one at a time).
func workers(agent envs.Agent, parallel int) []envs.Agent {
	f, ok := agent.(Forker)
	if !ok || parallel <= 1 {
		return []envs.Agent{agent}
	}
	out := []envs.Agent{agent}
	for len(out) < parallel {
		out = append(out, f.Fork())
	}
	return out
}

// forEachEpisode runs play(agent, i) for i in [0, n) on len(agents)
// workers, each with its own agent, and returns the first error (in
// episode order) or ctx's error.
func forEachEpisode(ctx context.Context, n int, agents []envs.Agent, play func(envs.Agent, int) error) error {
	errs := make([]error, n)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for _, a := range agents[:min(len(agents), n)] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				errs[i] = play(a, i)
			}
		}()
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// DefaultParallel is the number of episodes played at once when a caller
// leaves it to the core: one per core.
func DefaultParallel() int { return runtime.GOMAXPROCS(0) }

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
