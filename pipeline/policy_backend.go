package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/rspo-dev/rspo/llm"
	"github.com/rspo-dev/rspo/rollout/rolloutsvc"
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

// PolicyConfig says what plays π_θ in the actors.
type PolicyConfig struct {
	// Kind is PolicyBuiltin or PolicyOpenAI. Default (""): PolicyBuiltin.
	Kind string
	// Endpoint is the chat server (PolicyOpenAI only; its URL is required).
	Endpoint llm.EndpointConfig
	// Model is the model name requested for a version whose
	// policy.published event names none (PolicyOpenAI only). Default "":
	// such a version is refused (rolloutsvc.ErrNoModelName).
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

var _ rolloutsvc.Backend = (*llm.Backend)(nil)

// policyBackend returns the actor's backend for c (nil: the built-in
// PolicyCache) and the service it needs running beside the actor (the
// model book that names each version's model; nil for none).
func (c Config) policyBackend(b Bus) (rolloutsvc.Backend, func(context.Context) error, error) {
	pc := c.Policy
	if err := pc.Validate(); err != nil {
		return nil, nil, err
	}
	if pc.Kind != PolicyOpenAI {
		return nil, nil, nil
	}
	ep, err := llm.NewEndpoint(pc.Endpoint)
	if err != nil {
		return nil, nil, err
	}
	if pc.PinModel {
		backend, err := llm.NewBackend(ep, pc.Chat, func(context.Context, int64) (string, error) { return pc.Model, nil })
		return backend, nil, err
	}
	book := rolloutsvc.NewModelBook(b.JS, c.run(), pc.Model, c.Logger)
	backend, err := llm.NewBackend(ep, pc.Chat, book.ModelFor)
	if err != nil {
		return nil, nil, err
	}
	return backend, book.Run, nil
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
