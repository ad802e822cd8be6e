package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/llm"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/producers"
	"github.com/rspo-dev/rspo/schemas"
)

// The policy kinds an actor plays with (PolicyConfig.Kind).
const (
	// PolicyBuiltin is rspo's own policy, loaded from the run's snapshots.
	PolicyBuiltin = "builtin"
	// PolicyOpenAI is a policy behind an OpenAI-compatible chat-completions
	// server (vLLM, SGLang, `rspo serve policy`), through package llm.
	PolicyOpenAI = "openai"
)

// PolicyKinds lists the valid PolicyConfig.Kind values.
var PolicyKinds = []string{PolicyBuiltin, PolicyOpenAI}

// PolicyConfig says what plays π_θ in the actors, the learner's
// evaluations (learnersvc.Config.EvalAgent) and the explorers' tilted and
// frozen cycles (producers.ExplorerConfig.Backend).
type PolicyConfig struct {
	// Kind is PolicyBuiltin or PolicyOpenAI. Default (""): PolicyBuiltin.
	Kind string
	// Endpoint is the chat server (PolicyOpenAI only; its URL is required).
	Endpoint llm.EndpointConfig
	// Model is the model name requested for a version whose
	// policy.published event names none (PolicyOpenAI only). Default "":
	// such a version is refused (producers.ErrNoModelName).
	Model string
	// PinModel requests Model for every version, whatever its
	// policy.published event names (a fixed model: evaluation, data
	// collection). Default false. Needs Model.
	PinModel bool
	// Chat configures the requests (PolicyOpenAI only); see llm.ChatConfig
	// for its defaults.
	Chat llm.ChatConfig
}

// Validate reports every problem with the configuration.
func (c PolicyConfig) Validate() error {
	switch c.Kind {
	case "", PolicyBuiltin:
		if c.Endpoint.URL != "" || c.Model != "" || c.PinModel {
			return fmt.Errorf("pipeline: an endpoint and a model name are for the %q policy; the built-in policy plays in-process", PolicyOpenAI)
		}
		return nil
	case PolicyOpenAI:
		_, err := llm.NewEndpoint(c.Endpoint)
		if c.PinModel && c.Model == "" {
			err = errors.Join(err, errors.New("pipeline: a pinned model needs its name (--model)"))
		}
		return errors.Join(err, c.Chat.Validate())
	}
	return fmt.Errorf("pipeline: policy %q: want one of %v", c.Kind, PolicyKinds)
}

var _ producers.EvalBackend = (*llm.Backend)(nil)

// servedExplorer reports an in-process run whose explorer would have to
// train π_B through an inference server, which it cannot.
func (c Config) servedExplorer() error {
	l := c.Learner
	if c.Policy.Kind != PolicyOpenAI || !l.RSPO || l.Explore.Mode == schemas.ExplorerFrozen || l.Explore.Tilt > 0 {
		return nil
	}
	return fmt.Errorf("pipeline: with the %q policy the explorer explores tilted (--explore-tilt λ) or frozen (--explorer frozen): "+
		"training π_B needs the built-in policy (or turn RSPO off with --rspo=false)", PolicyOpenAI)
}

// servedPolicy is the PolicyOpenAI policy of one stage: its endpoint, the
// names of its versions' models, and the model book that must run beside
// the stage to learn them (nil with a pinned model).
type servedPolicy struct {
	ep       *llm.Endpoint
	chat     llm.ChatConfig
	modelFor llm.ModelFunc
	side     func(context.Context) error
}

// servedPolicy returns the stage's served policy, or nil for the built-in one.
func (c Config) servedPolicy(b Bus) (*servedPolicy, error) {
	pc := c.Policy
	if err := pc.Validate(); err != nil {
		return nil, err
	}
	if pc.Kind != PolicyOpenAI {
		return nil, nil
	}
	ep, err := llm.NewEndpoint(pc.Endpoint)
	if err != nil {
		return nil, err
	}
	sp := &servedPolicy{ep: ep, chat: pc.Chat}
	if pc.PinModel {
		sp.modelFor = func(context.Context, int64) (string, error) { return pc.Model, nil }
		return sp, nil
	}
	book := producers.NewModelBook(b.JS, c.run(), pc.Model, c.Logger)
	sp.modelFor, sp.side = book.ModelFor, book.Run
	return sp, nil
}

// backend is the actors' backend: every version played through the server.
func (sp *servedPolicy) backend() (producers.Backend, error) {
	return llm.NewBackend(sp.ep, sp.chat, sp.modelFor)
}

// evalAgent is the learner's evaluation agent: version v played through
// the server (learnersvc.Config.EvalAgent).
func (sp *servedPolicy) evalAgent(ctx context.Context, v int64, _ *policy.Policy, greedy bool) (envs.Agent, error) {
	m, err := sp.modelFor(ctx, v)
	if err != nil {
		return nil, err
	}
	return llm.NewAgent(ctx, sp.ep, sp.chat, m, greedy)
}

// withSidecar runs side beside run: side is started first and stopped once
// run has returned.
func withSidecar(run, side func(context.Context) error) func(context.Context) error {
	if side == nil {
		return run
	}
	return func(ctx context.Context) error {
		sctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		var sideErr error
		wg.Add(1)
		go func() {
			defer wg.Done()
			sideErr = side(sctx)
		}()
		err := run(ctx)
		cancel()
		wg.Wait()
		return errors.Join(err, sideErr)
	}
}
