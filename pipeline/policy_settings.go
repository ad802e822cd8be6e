package pipeline

import (
	"errors"
	"fmt"
	"time"

	"github.com/rspo-dev/rspo/llm"
	"github.com/rspo-dev/rspo/settings"
)

// PolicySettings are the settings of what plays π_θ — the built-in policy
// or a model behind an OpenAI-compatible chat server — as flags and
// configuration keys of `rspo run`, `rspo serve learner`, `rspo serve
// actor` and `rspo serve explorer`. Config maps them to a PolicyConfig.
type PolicySettings struct {
	Kind     string `setting:"policy" default:"builtin" enum:"builtin|openai" group:"policy" stages:"run,learner,actor,explorer" help:"what plays π_θ: builtin (rspo's own policy) or openai (a model behind an OpenAI-compatible chat server, see docs/llm.md)"`
	Endpoint string `setting:"endpoint" default:"" group:"policy" stages:"run,learner,actor,explorer" help:"chat server base URL including /v1, e.g. http://localhost:8000/v1 (--policy openai)"`
	Model    string `setting:"model" default:"" group:"policy" stages:"run,learner,actor,explorer" help:"model name to request for a version whose policy.published event names none (--policy openai)"`
	PinModel bool   `setting:"pin-model" default:"false" group:"policy" stages:"run,learner,actor,explorer" help:"request --model for every version, whatever policy.published names (--policy openai)"`
	// Concurrency bounds the chat requests in flight at once.
	Concurrency int           `setting:"llm-concurrency" default:"16" count:"true" group:"policy" stages:"run,learner,actor,explorer" help:"most chat requests in flight at once (--policy openai)"`
	Timeout     time.Duration `setting:"llm-timeout" default:"1m0s" above:"0" group:"policy" stages:"run,learner,actor,explorer" help:"bound on one chat request attempt (--policy openai)"`
	Retries     int           `setting:"llm-retries" default:"3" min:"0" max:"100" group:"policy" stages:"run,learner,actor,explorer" help:"retries of a failed chat request (connection errors, 408, 429, 5xx); 0 for none (--policy openai)"`
	Template    string        `setting:"chat-template" default:"" group:"policy" stages:"run,learner,actor,explorer" help:"chat template file (sections '--- system', '--- observation', '--- prompt'; default: the built-in template)"`
	TokenIDs    string        `setting:"token-ids" default:"token-id-strings" enum:"token-id-strings|token-ids-field|none" group:"policy" stages:"run,learner,actor,explorer" help:"how token ids are learnt (--policy openai)"`
	MaxTokens   int           `setting:"max-tokens" default:"64" count:"true" group:"policy" stages:"run,learner,actor,explorer" help:"max_tokens of a reply (--policy openai)"`
}

// openAIOnly are the keys of PolicySettings that only the openai policy
// reads.
var openAIOnly = []string{"endpoint", "model", "pin-model", "llm-concurrency", "llm-timeout", "llm-retries", "chat-template", "token-ids", "max-tokens"}

// Config maps the settings to a PolicyConfig, reporting every problem:
// openai settings changed from their defaults for the built-in policy, a
// missing endpoint, a template file that does not load.
func (p PolicySettings) Config() (PolicyConfig, error) {
	if err := settings.Validate(&p); err != nil {
		return PolicyConfig{}, err
	}
	if p.Kind == PolicyBuiltin {
		var changed []string
		var d PolicySettings
		settings.Defaults(&d, "")
		for _, key := range openAIOnly {
			s, _, _ := settings.Lookup(&p, key)
			if s.Value(&p) != s.Value(&d) {
				changed = append(changed, "--"+key)
			}
		}
		if len(changed) > 0 {
			return PolicyConfig{}, fmt.Errorf("pipeline: %v: only with --policy openai (the built-in policy plays in-process)", changed)
		}
		return PolicyConfig{Kind: PolicyBuiltin}, nil
	}
	var errs []error
	if p.Endpoint == "" {
		errs = append(errs, errors.New("pipeline: --policy openai needs --endpoint URL (the server's base URL including /v1)"))
	}
	retries := p.Retries
	if retries == 0 {
		retries = -1 // EndpointConfig: −1 is none
	}
	pc := PolicyConfig{Kind: PolicyOpenAI, Model: p.Model, PinModel: p.PinModel,
		Endpoint: llm.EndpointConfig{URL: p.Endpoint, Timeout: p.Timeout, Retries: retries, MaxConcurrent: p.Concurrency},
		Chat:     llm.ChatConfig{TokenIDs: llm.TokenIDMode(p.TokenIDs), MaxTokens: p.MaxTokens}}
	if p.Template != "" {
		t, err := llm.LoadTemplate(p.Template)
		if err != nil {
			errs = append(errs, fmt.Errorf("pipeline: chat-template: %w", err))
		}
		pc.Chat.Template = t
	}
	if len(errs) == 0 {
		errs = append(errs, pc.Validate())
	}
	return pc, errors.Join(errs...)
}
