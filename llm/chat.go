package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ChatRequest is the body of POST /chat/completions as OpenAI documents it,
// with the vLLM extensions rspo uses to learn the sampled token ids.
type ChatRequest struct {
	Model    string        `json:"model"`
	Messages []ChatMessage `json:"messages"`
	// Temperature is omitted for the server's default (1 for OpenAI and
	// vLLM); 0 asks for greedy decoding.
	Temperature *float64 `json:"temperature,omitempty"`
	// MaxTokens bounds the completion's tokens.
	MaxTokens int `json:"max_tokens,omitempty"`
	// MaxCompletionTokens is OpenAI's newer name for MaxTokens, which the
	// official SDKs send; rspo's client sends max_tokens, which every
	// vLLM and SGLang release reads.
	MaxCompletionTokens int `json:"max_completion_tokens,omitempty"`
	// N is the number of choices to sample (omitted: 1).
	N int `json:"n,omitempty"`
	// Seed makes sampling reproducible on servers that honour it.
	Seed *int64   `json:"seed,omitempty"`
	Stop []string `json:"stop,omitempty"`
	// Logprobs asks for each sampled token's log-prob
	// (choices[].logprobs.content); rspo always sets it.
	Logprobs bool `json:"logprobs,omitempty"`
	// TopLogprobs asks for that many alternatives per token (0..20).
	TopLogprobs int `json:"top_logprobs,omitempty"`
	// Stream asks for the answer as server-sent events of
	// chat.completion.chunk objects. rspo's client never streams; servers
	// (llmserve) read it.
	Stream bool `json:"stream,omitempty"`
	// StreamOptions tunes a streamed answer; OpenAI refuses it without
	// Stream.
	StreamOptions *StreamOptions `json:"stream_options,omitempty"`
	// ReturnTokensAsTokenIDs (vLLM) makes every logprobs token read
	// "token_id:<id>" instead of the token's text.
	ReturnTokensAsTokenIDs bool `json:"return_tokens_as_token_ids,omitempty"`
	// ReturnTokenIDs (vLLM ≥ 0.10.2, SGLang) adds choices[].token_ids and
	// prompt_token_ids to the answer.
	ReturnTokenIDs bool `json:"return_token_ids,omitempty"`
}

// StreamOptions are the stream_options of a streamed request.
type StreamOptions struct {
	// IncludeUsage adds a last chunk, with no choices, carrying the
	// request's usage.
	IncludeUsage bool `json:"include_usage,omitempty"`
}

// ChatMessage is one message of a conversation. Content is plain text; on
// decoding, the array-of-parts form ([{"type":"text","text":...}]) is
// accepted and its text parts joined, and null reads as "".
type ChatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// UnmarshalJSON accepts a string, null, or an array of text parts as content.
func (m *ChatMessage) UnmarshalJSON(b []byte) error {
	var raw struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	m.Role, m.Content = raw.Role, ""
	c := bytes.TrimSpace(raw.Content)
	switch {
	case len(c) == 0 || bytes.Equal(c, []byte("null")):
		return nil
	case c[0] == '"':
		return json.Unmarshal(c, &m.Content)
	case c[0] == '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(c, &parts); err != nil {
			return fmt.Errorf("llm: message content: %w", err)
		}
		var sb strings.Builder
		for _, p := range parts {
			if p.Type != "text" {
				return fmt.Errorf("llm: message content part of type %q: only text parts are understood", p.Type)
			}
			sb.WriteString(p.Text)
		}
		m.Content = sb.String()
		return nil
	}
	return errors.New("llm: message content is neither a string nor an array of text parts")
}

// ChatResponse is the answer of POST /chat/completions.
type ChatResponse struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []ChatChoice `json:"choices"`
	Usage   *Usage       `json:"usage,omitempty"`
	// PromptTokenIDs (vLLM, SGLang with return_token_ids) are the prompt's
	// token ids; rspo does not record them.
	PromptTokenIDs []int64 `json:"prompt_token_ids,omitempty"`
}

// ChatChoice is one sampled completion.
type ChatChoice struct {
	Index        int             `json:"index"`
	Message      ChatMessage     `json:"message"`
	Logprobs     *ChoiceLogprobs `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
	// TokenIDs (return_token_ids) are the completion's token ids, one per
	// entry of Logprobs.Content.
	TokenIDs []int64 `json:"token_ids,omitempty"`
}

// ChoiceLogprobs holds the log-prob of every sampled token.
type ChoiceLogprobs struct {
	Content []TokenLogprob `json:"content"`
}

// TokenLogprob is one sampled token: its text (or "token_id:<id>" with
// return_tokens_as_token_ids), log-prob, UTF-8 bytes and alternatives.
type TokenLogprob struct {
	Token       string       `json:"token"`
	Logprob     float64      `json:"logprob"`
	Bytes       []int        `json:"bytes"`
	TopLogprobs []TopLogprob `json:"top_logprobs"`
}

// TopLogprob is one alternative to a sampled token.
type TopLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

// TokenIDMode says how the player learns a completion's token ids.
type TokenIDMode string

const (
	// TokenIDStrings asks for return_tokens_as_token_ids (vLLM) and reads
	// each logprobs token "token_id:<id>".
	TokenIDStrings TokenIDMode = "token-id-strings"
	// TokenIDField asks for return_token_ids (vLLM ≥ 0.10.2, SGLang) and
	// reads choices[].token_ids.
	TokenIDField TokenIDMode = "token-ids-field"
	// TokenIDNone asks for neither: steps record the behaviour log-prob but
	// no token ids or token log-probs (a server that rejects the vLLM
	// extensions, e.g. OpenAI's own).
	TokenIDNone TokenIDMode = "none"
)

// TokenIDModes lists the valid modes.
var TokenIDModes = []TokenIDMode{TokenIDStrings, TokenIDField, TokenIDNone}

// ErrNoLogprobs means a choice carried no token log-probs.
var ErrNoLogprobs = errors.New("llm: the endpoint returned no logprobs: rspo needs them for the behaviour log-prob; vLLM/SGLang return them when the request has logprobs: true")

// Completion is what rspo keeps of one choice: its text, the log-prob of
// the whole completion (the sum of its tokens') and, unless the mode is
// TokenIDNone, every token's id and log-prob.
type Completion struct {
	Text          string
	LogProb       float64
	TokenIDs      []int32
	TokenLogProbs []float32
}

// maxRoundingLogprob is the largest positive log-prob read as 0: servers
// compute log-softmax in float32 and may round a certain token just above 0.
const maxRoundingLogprob = 1e-4

// ParseCompletion reads choice c under mode: it returns ErrNoLogprobs
// when c has no token log-probs, and an error for a log-prob that is not
// a finite number ≤ 0, a token id that is missing, negative or over int32,
// or token ids that do not match the log-probs one to one.
func ParseCompletion(c ChatChoice, mode TokenIDMode) (Completion, error) {
	if c.Logprobs == nil || len(c.Logprobs.Content) == 0 {
		return Completion{}, ErrNoLogprobs
	}
	toks := c.Logprobs.Content
	out := Completion{Text: c.Message.Content}
	if mode != TokenIDNone {
		out.TokenIDs, out.TokenLogProbs = make([]int32, len(toks)), make([]float32, len(toks))
	}
	if mode == TokenIDField && len(c.TokenIDs) != len(toks) {
		return Completion{}, fmt.Errorf("llm: choice %d has %d token ids for %d logprobs (does the server support return_token_ids?)", c.Index, len(c.TokenIDs), len(toks))
	}
	for i, t := range toks {
		lp := t.Logprob
		if math.IsNaN(lp) || math.IsInf(lp, 0) || lp > maxRoundingLogprob || lp < -math.MaxFloat32 {
			return Completion{}, fmt.Errorf("llm: choice %d token %d: log-prob %v is not a finite number ≤ 0", c.Index, i, lp)
		}
		lp = min(lp, 0)
		out.LogProb += lp
		switch mode {
		case TokenIDStrings:
			id, err := parseTokenID(t.Token)
			if err != nil {
				return Completion{}, fmt.Errorf("llm: choice %d token %d: %w", c.Index, i, err)
			}
			out.TokenIDs[i] = id
		case TokenIDField:
			id := c.TokenIDs[i]
			if id < 0 || id > math.MaxInt32 {
				return Completion{}, fmt.Errorf("llm: choice %d token id %d out of range 0..%d", c.Index, id, math.MaxInt32)
			}
			out.TokenIDs[i] = int32(id)
		}
		if out.TokenLogProbs != nil {
			out.TokenLogProbs[i] = float32(lp)
		}
	}
	return out, nil
}

// tokenIDPrefix starts a logprobs token under return_tokens_as_token_ids.
const tokenIDPrefix = "token_id:"

// parseTokenID reads "token_id:<id>".
func parseTokenID(tok string) (int32, error) {
	s, ok := strings.CutPrefix(tok, tokenIDPrefix)
	if !ok {
		return 0, fmt.Errorf("token %q does not read %q<id> (does the server support return_tokens_as_token_ids?)", tok, tokenIDPrefix)
	}
	id, err := strconv.ParseInt(s, 10, 32)
	if err != nil || id < 0 {
		return 0, fmt.Errorf("token %q: the id is not a number in 0..%d", tok, math.MaxInt32)
	}
	return int32(id), nil
}

// TokenIDString is how a token reads under return_tokens_as_token_ids.
func TokenIDString(id int32) string { return tokenIDPrefix + strconv.FormatInt(int64(id), 10) }
