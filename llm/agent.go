package llm

import (
	"context"
	"math/rand/v2"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/rollout"
)

// Agent adapts a served model to envs.Agent for rollout.Evaluate: each Act
// is one chat request seeded from the episode's random source. Like
// policy.Agent it remembers the current episode's turns; Fork hands out
// independent copies for parallel evaluation. An Agent belongs to one
// evaluation: it keeps that evaluation's ctx, which ends its requests.
type Agent struct {
	ctx    context.Context
	c      *chat
	model  string
	greedy bool
	tilt   policy.ActionScorer
	lambda float64

	task  string
	hist  []policy.Turn
	last  policy.Turn
	acted bool
}

var _ rollout.Forker = (*Agent)(nil)

// NewAgent returns an agent playing model on ep for one evaluation under
// ctx; greedy asks for temperature 0, else the server's default.
func NewAgent(ctx context.Context, ep *Endpoint, cfg ChatConfig, model string, greedy bool) (*Agent, error) {
	c, err := newChat(ep, cfg)
	if err != nil {
		return nil, err
	}
	return &Agent{ctx: ctx, c: c, model: model, greedy: greedy}, nil
}

// WithTilt makes the agent act with the model tilted by s (see Player;
// a tilted agent samples, greedy or not); λ ≤ 0 or a nil s turns it off.
// It returns a.
func (a *Agent) WithTilt(s policy.ActionScorer, lambda float64) *Agent {
	a.tilt, a.lambda = s, lambda
	return a
}

// Act implements envs.Agent. It returns envs.ErrNoActions when the episode
// offers no admissible action.
func (a *Agent) Act(ep envs.Episode, rng *rand.Rand) (string, error) {
	s := policy.State{Instruction: ep.Task().Instruction, Observation: ep.Observation(), Admissible: ep.Admissible()}
	if len(s.Admissible) == 0 {
		return "", envs.ErrNoActions
	}
	if a.acted && ep.Steps() > 0 && ep.Steps() == len(a.hist)+1 && ep.Task().ID == a.task {
		a.hist = append(a.hist, a.last)
		s.History = a.hist
	} else {
		a.hist, a.task = a.hist[:0], ep.Task().ID
	}
	sp := sampling{seed: rng.Int64(), greedy: a.greedy && !(a.tilt != nil && a.lambda > 0), tilt: a.tilt, lambda: a.lambda}
	ch, err := a.c.choose(a.ctx, a.model, &s, sp)
	if err != nil {
		return "", err
	}
	a.last, a.acted = policy.Turn{Observation: s.Observation, Action: ch.action}, true
	return ch.action, nil
}

// Fork implements rollout.Forker: an agent with the same settings and a
// history of its own.
func (a *Agent) Fork() envs.Agent {
	return &Agent{ctx: a.ctx, c: a.c, model: a.model, greedy: a.greedy, tilt: a.tilt, lambda: a.lambda}
}
