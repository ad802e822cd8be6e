package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/rspo-dev/rspo/llm"
	"github.com/rspo-dev/rspo/pipeline"
)

// policyFlags choose what plays π_θ in an actor: --policy builtin (the
// default) or openai with its endpoint and chat settings.
type policyFlags struct {
	kind, endpoint, model, template, tokenIDs string
	concurrency, retries, maxTokens           int
	timeout                                   time.Duration
	pin                                       bool
}

func (f *policyFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.kind, "policy", pipeline.PolicyBuiltin, "what plays π_θ: "+strings.Join(pipeline.PolicyKinds, "|")+
		" (openai: a model behind an OpenAI-compatible chat server, see docs/llm.md)")
	fs.StringVar(&f.endpoint, "endpoint", "", "chat server base URL including /v1, e.g. http://localhost:8000/v1 (--policy openai)")
	fs.StringVar(&f.model, "model", "", "model name to request for a version whose policy.published event names none (--policy openai)")
	fs.BoolVar(&f.pin, "pin-model", false, "request --model for every version, whatever policy.published names (--policy openai)")
	fs.IntVar(&f.concurrency, "llm-concurrency", 16, "most chat requests in flight at once (--policy openai)")
	fs.DurationVar(&f.timeout, "llm-timeout", 60*time.Second, "bound on one chat request attempt (--policy openai)")
	fs.IntVar(&f.retries, "llm-retries", 3, "retries of a failed chat request (connection errors, 408, 429, 5xx); 0 for none (--policy openai)")
	fs.StringVar(&f.template, "chat-template", "", "chat template file (sections '--- system', '--- observation', '--- prompt'; default: the built-in template)")
	fs.StringVar(&f.tokenIDs, "token-ids", string(llm.TokenIDStrings), "how token ids are learnt: "+joinModes()+" (--policy openai)")
	fs.IntVar(&f.maxTokens, "max-tokens", llm.DefaultMaxTokens, "max_tokens of a reply (--policy openai)")
}

func joinModes() string {
	s := make([]string, len(llm.TokenIDModes))
	for i, m := range llm.TokenIDModes {
		s[i] = string(m)
	}
	return strings.Join(s, "|")
}

// config maps the flags to a pipeline.PolicyConfig, saying what to fix;
// fs tells which flags were given.
func (f *policyFlags) config(fs *pflag.FlagSet) (pipeline.PolicyConfig, error) {
	if !slices.Contains(pipeline.PolicyKinds, f.kind) {
		return pipeline.PolicyConfig{}, fmt.Errorf("--policy %q: want one of %s", f.kind, strings.Join(pipeline.PolicyKinds, ", "))
	}
	if f.kind == pipeline.PolicyBuiltin {
		var given []string
		for _, n := range []string{"endpoint", "model", "pin-model", "llm-concurrency", "llm-timeout", "llm-retries", "chat-template", "token-ids", "max-tokens"} {
			if fs.Changed(n) {
				given = append(given, "--"+n)
			}
		}
		if len(given) > 0 {
			return pipeline.PolicyConfig{}, fmt.Errorf("%s: only with --policy openai (the built-in policy plays in-process)", strings.Join(given, ", "))
		}
		return pipeline.PolicyConfig{Kind: pipeline.PolicyBuiltin}, nil
	}
	var errs []error
	if f.endpoint == "" {
		errs = append(errs, errors.New("--policy openai needs --endpoint URL (the server's base URL including /v1)"))
	}
	if f.concurrency < 1 {
		errs = append(errs, fmt.Errorf("--llm-concurrency %d: want ≥ 1", f.concurrency))
	}
	if f.timeout <= 0 {
		errs = append(errs, fmt.Errorf("--llm-timeout %v: want a positive duration", f.timeout))
	}
	if f.retries < 0 {
		errs = append(errs, fmt.Errorf("--llm-retries %d: want ≥ 0", f.retries))
	}
	if f.maxTokens < 1 {
		errs = append(errs, fmt.Errorf("--max-tokens %d: want ≥ 1", f.maxTokens))
	}
	retries := f.retries
	if retries == 0 {
		retries = -1 // EndpointConfig: −1 is none
	}
	pc := pipeline.PolicyConfig{Kind: pipeline.PolicyOpenAI, Model: f.model, PinModel: f.pin,
		Endpoint: llm.EndpointConfig{URL: f.endpoint, Timeout: f.timeout, Retries: retries, MaxConcurrent: f.concurrency},
		Chat:     llm.ChatConfig{TokenIDs: llm.TokenIDMode(f.tokenIDs), MaxTokens: f.maxTokens}}
	if f.template != "" {
		t, err := llm.LoadTemplate(f.template)
		if err != nil {
			errs = append(errs, fmt.Errorf("--chat-template: %w", err))
		}
		pc.Chat.Template = t
	}
	if len(errs) == 0 {
		errs = append(errs, pc.Validate())
	}
	return pc, errors.Join(errs...)
}
