package policy

import (
	"math/rand/v2"

	"github.com/rspo-dev/rspo/envs"
)

// Agent adapts a policy to envs.Agent for evaluation. It remembers the
// current episode's turns (envs.Episode does not expose them); an episode
// at step 0, or one that does not continue the previous call's, starts a
// fresh history. Like envs.Evaluate, use it from one goroutine.
type Agent struct {
	p      *Policy
	greedy bool
	fz     *Featurizer
	ps     Pass
	task   string
	hist   []Turn
	last   Turn // the observation and action of the previous call
	acted  bool
	// tilt, with lambda > 0, steers the agent as RolloutOptions.Tilt does.
	tilt   ActionScorer
	lambda float64
	scores []float64
}

var _ envs.Agent = (*Agent)(nil)

// NewAgent returns an agent that samples from p (greedy false) or takes
// its most probable action (greedy true).
func NewAgent(p *Policy, greedy bool) *Agent {
	return &Agent{p: p, greedy: greedy, fz: p.NewFeaturizer()}
}

// WithTilt makes the agent act with the policy tilted by s, q(a|s) ∝
// π(a|s)·exp(λ·score(s,a)), as a tilted explorer does; λ ≤ 0 or a nil s
// turns it off. It returns a.
func (a *Agent) WithTilt(s ActionScorer, lambda float64) *Agent {
	a.tilt, a.lambda = s, lambda
	return a
}

// Act implements envs.Agent. It returns envs.ErrNoActions when the episode
// offers no admissible action.
func (a *Agent) Act(ep envs.Episode, rng *rand.Rand) (string, error) {
	s := State{Instruction: ep.Task().Instruction, Observation: ep.Observation(), Admissible: ep.Admissible()}
	if len(s.Admissible) == 0 {
		return "", envs.ErrNoActions
	}
	first := !a.continues(ep)
	if first {
		a.hist, a.task = a.hist[:0], ep.Task().ID
	} else {
		a.hist = append(a.hist, a.last)
		s.History = a.hist
	}
	f, err := a.fz.scratch(&s, first)
	if err != nil {
		return "", err
	}
	a.p.distribution(f, &a.ps)
	tiltState(&a.ps, &s, a.tilt, a.lambda, &a.scores)
	idx := Argmax(a.ps.Probs)
	if !a.greedy {
		idx = SampleIndex(a.ps.Probs, rng)
	}
	a.last, a.acted = Turn{Observation: s.Observation, Action: s.Admissible[idx]}, true
	return s.Admissible[idx], nil
}

// continues reports whether ep is the episode of the previous call, one
// step further.
func (a *Agent) continues(ep envs.Episode) bool {
	return a.acted && ep.Steps() > 0 && ep.Steps() == len(a.hist)+1 && ep.Task().ID == a.task
}
