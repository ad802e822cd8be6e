package llm

import (
	"context"
	"errors"
	"fmt"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/rollout"
)

// ModelFunc names the model under which the server serves policy version v.
// An error is retried by the caller (the version may not be announced yet).
type ModelFunc func(ctx context.Context, v int64) (string, error)

// Backend hands out players of policy versions served by one chat
// endpoint: it has the method set of producers.EvalBackend, so an actor
// plays rollouts and evaluation shards through it
// (producers.ActorConfig.Backend). It is safe for concurrent
// use.
type Backend struct {
	c        *chat
	modelFor ModelFunc
}

// NewBackend returns a backend over ep; modelFor maps versions to model
// names (producers.ModelBook.ModelFor follows the run's policy.published
// events).
func NewBackend(ep *Endpoint, cfg ChatConfig, modelFor ModelFunc) (*Backend, error) {
	if modelFor == nil {
		return nil, errors.New("llm: backend: no ModelFunc to name each version's model")
	}
	c, err := newChat(ep, cfg)
	if err != nil {
		return nil, err
	}
	return &Backend{c: c, modelFor: modelFor}, nil
}

// Player returns the player of version v, or modelFor's error.
func (b *Backend) Player(ctx context.Context, v int64) (rollout.Player, error) {
	m, err := b.modelFor(ctx, v)
	if err != nil {
		return nil, err
	}
	if m == "" {
		return nil, fmt.Errorf("llm: backend: version %d has no model name", v)
	}
	return &Player{c: b.c, model: m, version: v}, nil
}

// EvalAgent returns the agent that plays an evaluation of version v under
// ctx (producers.EvalBackend): the model modelFor names, greedy asking for
// temperature 0, as NewAgent's.
func (b *Backend) EvalAgent(ctx context.Context, v int64, greedy bool) (envs.Agent, error) {
	m, err := b.modelFor(ctx, v)
	if err != nil {
		return nil, err
	}
	if m == "" {
		return nil, fmt.Errorf("llm: backend: version %d has no model name", v)
	}
	return &Agent{ctx: ctx, c: b.c, model: m, greedy: greedy}, nil
}
