package llm

import (
	"errors"
	"fmt"
	"slices"
)

// ChatConfig configures how rspo plays through a chat-completions server.
type ChatConfig struct {
	// Template renders each turn into messages. Default: the default
	// template (DefaultSystem, DefaultObservation, DefaultPrompt).
	Template Template
	// MaxTokens bounds a reply (max_tokens). Default 64: an action is a
	// short line.
	MaxTokens int
	// TokenIDs is how a completion's token ids are learnt. Default
	// TokenIDStrings (vLLM's return_tokens_as_token_ids).
	TokenIDs TokenIDMode
	// Candidates is n, the completions a tilted step asks for in one
	// request and resamples among (see Player). Default 8; more costs
	// more tokens and estimates the tilted behaviour log-prob better.
	Candidates int
}

// DefaultMaxTokens and DefaultCandidates are ChatConfig's defaults.
const (
	DefaultMaxTokens  = 64
	DefaultCandidates = 8
)

// Validate reports every problem with the configuration.
func (c ChatConfig) Validate() error {
	var errs []error
	if c.MaxTokens < 0 {
		errs = append(errs, fmt.Errorf("llm: max tokens %d is negative (0: the default %d)", c.MaxTokens, DefaultMaxTokens))
	}
	if c.Candidates < 0 || c.Candidates == 1 {
		errs = append(errs, fmt.Errorf("llm: candidates %d: a tilted step resamples among ≥ 2 completions (0: the default %d)", c.Candidates, DefaultCandidates))
	}
	if c.TokenIDs != "" && !slices.Contains(TokenIDModes, c.TokenIDs) {
		errs = append(errs, fmt.Errorf("llm: token id mode %q: want one of %v", c.TokenIDs, TokenIDModes))
	}
	if _, err := NewRenderer(c.Template); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (c ChatConfig) withDefaults() ChatConfig {
	if c.MaxTokens == 0 {
		c.MaxTokens = DefaultMaxTokens
	}
	if c.TokenIDs == "" {
		c.TokenIDs = TokenIDStrings
	}
	if c.Candidates == 0 {
		c.Candidates = DefaultCandidates
	}
	return c
}
