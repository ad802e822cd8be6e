// Package llmserve serves built-in rspo policies over the OpenAI
// chat-completions protocol (POST /v1/chat/completions, GET /v1/models,
// GET /v1/models/{model}), so actors with --policy openai, tests, users
// without a GPU and agent frameworks built on OpenAI's SDKs can play
// through a real server (`rspo serve policy`).
//
// A request's conversation is read back into a policy.State by the
// default chat template (llm.ParseConversation): instruction, history,
// observation and admissible actions, after any system or developer
// messages. The policy's distribution over the admissible actions is
// computed and sampled; each answer is one action. With stream: true the
// answer comes as server-sent events of chat.completion.chunk objects
// ending in [DONE], as OpenAI streams (stream.go). Every refusal is an
// OpenAI error object with its HTTP status (RequestError), and
// RequireAPIKey puts the server behind a bearer key.
//
// Tokenisation is a toy: a whole action is one token, its id TokenID(a)
// (the FNV-1a hash of the action's text, top bit cleared) and its log-prob
// log π(a|s), so a completion's log-prob is the built-in behaviour
// log-prob. The prompt's usage count is its white-space separated words.
//
// Sampling: temperature 0 takes the most probable action; a temperature
// t > 0 samples from the policy at temperature t (policy.WithTemperature),
// and no temperature from the policy at its own. The first choice of a
// request seeded s at turn k (k earlier turns in the conversation) is
// drawn as policy.Rollout draws step k of an episode seeded
// llm.EpisodeSeed(s, k) — the (k+1)-th uniform of policy.RolloutRand — so
// llm.Player, which seeds turn k with llm.TurnSeed, replays the built-in
// rollout exactly. Further choices (n > 1) draw from a stream of their
// own; a request without a seed draws a random one. Stop sequences and
// max_tokens ≥ 1 do not change a one-token answer.
package llmserve

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rspo-dev/rspo/llm"
	"github.com/rspo-dev/rspo/policy"
)

// Limits on a request.
const (
	// MaxRequestBytes bounds a request body.
	MaxRequestBytes = 8 << 20
	// MaxChoices bounds n.
	MaxChoices = 128
	// MaxTopLogprobs bounds top_logprobs, as OpenAI does.
	MaxTopLogprobs = 20
)

// Server serves policies by model name. It is safe for concurrent use;
// models may be added and removed while it serves.
type Server struct {
	mu       sync.RWMutex
	models   map[string]model
	answered map[string]uint64 // requests answered, by model name
	seq      atomic.Uint64
	now      func() time.Time
	embed    *llm.EmbedHandler // serves /v1/embeddings when set
}

type model struct {
	p       *policy.Policy
	created int64
}

var _ http.Handler = (*Server)(nil)

// New returns a server with no models.
func New() *Server {
	return &Server{models: map[string]model{}, answered: map[string]uint64{}, now: time.Now}
}

// Answered returns how many requests the server has answered, by model
// name (a copy).
func (s *Server) Answered() map[string]uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[string]uint64, len(s.answered))
	for k, v := range s.answered {
		out[k] = v
	}
	return out
}

// Serve serves p under name, replacing any policy of that name.
func (s *Server) Serve(name string, p *policy.Policy) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models[name] = model{p: p, created: s.now().Unix()}
}

// ServeEmbeddings also serves POST /v1/embeddings with h (and lists its
// model on GET /v1/models). Call it before the server serves requests.
func (s *Server) ServeEmbeddings(h *llm.EmbedHandler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embed = h
}

// Remove stops serving name.
func (s *Server) Remove(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.models, name)
}

// Models lists the served names, sorted.
func (s *Server) Models() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	names := make([]string, 0, len(s.models))
	for n := range s.models {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (s *Server) lookup(name string) (*policy.Policy, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m, ok := s.models[name]
	return m.p, ok
}

// ServeHTTP serves POST /v1/chat/completions, GET /v1/models and GET
// /v1/models/{model}, and POST /v1/embeddings once ServeEmbeddings gave it
// a handler. Every error answer is an OpenAI error object.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case path == "/v1/chat/completions":
		only(w, r, http.MethodPost, s.chat)
	case path == "/v1/models":
		only(w, r, http.MethodGet, s.list)
	case strings.HasPrefix(r.URL.Path, modelsPrefix) && len(r.URL.Path) > len(modelsPrefix):
		only(w, r, http.MethodGet, s.retrieve)
	case path == "/v1/embeddings" && s.embeddings() != nil:
		s.embeddings().ServeEmbeddings(w, r)
	default:
		writeError(w, &RequestError{Status: http.StatusNotFound, API: llm.NewAPIError("invalid_request_error", "unknown_url", "",
			fmt.Sprintf("no route %s %s: this server serves POST /v1/chat/completions, GET /v1/models and GET /v1/models/{model}", r.Method, r.URL.Path))})
	}
}

// only calls serve for requests of method, and answers 405 to others.
func only(w http.ResponseWriter, r *http.Request, method string, serve http.HandlerFunc) {
	if r.Method != method {
		w.Header().Set("Allow", method)
		writeError(w, &RequestError{Status: http.StatusMethodNotAllowed, API: llm.NewAPIError("invalid_request_error", "method_not_allowed", "",
			fmt.Sprintf("%s is not allowed on %s: use %s", r.Method, r.URL.Path, method))})
		return
	}
	serve(w, r)
}

func (s *Server) embeddings() *llm.EmbedHandler {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.embed
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestBytes+1))
	if err != nil {
		writeError(w, badParam("", "unreadable_body", "cannot read the request body: %v", err))
		return
	}
	req, resp, err := s.complete(body)
	switch {
	case err != nil:
		writeError(w, err)
	case req.Stream:
		writeStream(w, resp, req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
	default:
		llm.WriteJSON(w, http.StatusOK, resp)
	}
}

// Complete answers one chat-completions request body as a whole (a
// request asking for a stream included). Its errors are *RequestError
// carrying the HTTP status ServeHTTP answers with: 413 for a body over
// MaxRequestBytes, 400 for a request it cannot read (bad JSON, a
// conversation not in the default template, bad sampling parameters), 404
// for an unknown model.
func (s *Server) Complete(body []byte) (*llm.ChatResponse, error) {
	_, resp, err := s.complete(body)
	return resp, err
}

func (s *Server) complete(body []byte) (llm.ChatRequest, *llm.ChatResponse, error) {
	var req llm.ChatRequest
	if len(body) > MaxRequestBytes {
		return req, nil, &RequestError{Status: http.StatusRequestEntityTooLarge,
			API: llm.NewAPIError("invalid_request_error", "request_too_large", "", fmt.Sprintf("the request body is over %d bytes", MaxRequestBytes))}
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return req, nil, badParam("", "invalid_json", "the request body is not a chat-completions request: %v", err)
	}
	p, ok := s.lookup(req.Model)
	if !ok {
		return req, nil, unknownModel(req.Model, s.Models())
	}
	st, err := llm.ParseConversation(req.Messages)
	if err != nil {
		return req, nil, badParam("messages", "unparsable_conversation", "%v", err)
	}
	sp, err := readSampling(req, len(st.History))
	if err != nil {
		return req, nil, err
	}
	resp, err := s.answer(req, p, &st, sp)
	if err == nil {
		s.mu.Lock()
		s.answered[req.Model]++
		s.mu.Unlock()
	}
	return req, resp, err
}
