// Package llmserve serves built-in rspo policies over the OpenAI
// chat-completions protocol (POST /v1/chat/completions, GET /v1/models),
// so actors with --policy openai, tests and users without a GPU can play
// through a real server (`rspo serve policy`).
//
// A request's conversation is read back into a policy.State by the
// default chat template (llm.ParseConversation): instruction, history,
// observation and admissible actions. The policy's distribution over the
// admissible actions is computed and sampled; each answer is one action.
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
	"errors"
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

// ServeHTTP serves POST /v1/chat/completions and GET /v1/models, and POST
// /v1/embeddings once ServeEmbeddings gave it a handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch path := strings.TrimSuffix(r.URL.Path, "/"); {
	case path == "/v1/chat/completions" && r.Method == http.MethodPost:
		s.chat(w, r)
	case path == "/v1/models" && r.Method == http.MethodGet:
		s.list(w)
	case path == "/v1/embeddings" && s.embeddings() != nil:
		s.embeddings().ServeEmbeddings(w, r)
	case path == "/v1/chat/completions" || path == "/v1/models":
		writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "method_not_allowed",
			fmt.Sprintf("%s is not allowed on %s", r.Method, path))
	default:
		writeError(w, http.StatusNotFound, "invalid_request_error", "not_found",
			fmt.Sprintf("no route %s %s: this server serves POST /v1/chat/completions and GET /v1/models", r.Method, r.URL.Path))
	}
}

// ModelList is the answer of GET /v1/models.
type ModelList struct {
	Object string      `json:"object"`
	Data   []ModelInfo `json:"data"`
}

// ModelInfo describes one served model.
type ModelInfo struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func (s *Server) list(w http.ResponseWriter) {
	s.mu.RLock()
	out := ModelList{Object: "list", Data: []ModelInfo{}}
	for name, m := range s.models {
		out.Data = append(out.Data, ModelInfo{ID: name, Object: "model", Created: m.created, OwnedBy: "rspo"})
	}
	if s.embed != nil {
		c := s.embed.ModelCard()
		out.Data = append(out.Data, ModelInfo{ID: c.ID, Object: c.Object, Created: c.Created, OwnedBy: c.OwnedBy})
	}
	s.mu.RUnlock()
	slices.SortFunc(out.Data, func(a, b ModelInfo) int { return strings.Compare(a.ID, b.ID) })
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) embeddings() *llm.EmbedHandler {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.embed
}

// requestError is an OpenAI error answer.
type requestError struct {
	status            int
	typ, code, reason string
}

func (e *requestError) Error() string { return e.reason }

func badRequest(code, format string, a ...any) *requestError {
	return &requestError{status: http.StatusBadRequest, typ: "invalid_request_error", code: code, reason: fmt.Sprintf(format, a...)}
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestBytes+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "unreadable_body", "cannot read the request body: "+err.Error())
		return
	}
	resp, err := s.Complete(body)
	if err != nil {
		var re *requestError
		if !errors.As(err, &re) {
			re = &requestError{status: http.StatusInternalServerError, typ: "server_error", code: "internal_error", reason: err.Error()}
		}
		writeError(w, re.status, re.typ, re.code, re.reason)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// Complete answers one chat-completions request body. Its errors carry the
// HTTP status ServeHTTP answers with: 400 for a request it cannot read
// (bad JSON, a conversation not in the default template, bad sampling
// parameters), 404 for an unknown model.
func (s *Server) Complete(body []byte) (*llm.ChatResponse, error) {
	if len(body) > MaxRequestBytes {
		return nil, badRequest("request_too_large", "the request body is over %d bytes", MaxRequestBytes)
	}
	var req llm.ChatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, badRequest("invalid_json", "the request body is not a chat-completions request: %v", err)
	}
	p, ok := s.lookup(req.Model)
	if !ok {
		return nil, &requestError{status: http.StatusNotFound, typ: "invalid_request_error", code: "model_not_found",
			reason: fmt.Sprintf("the model %q does not exist; served: %v", req.Model, s.Models())}
	}
	st, err := llm.ParseConversation(req.Messages)
	if err != nil {
		return nil, badRequest("unparsable_conversation", "%v", err)
	}
	sp, err := readSampling(req, len(st.History))
	if err != nil {
		return nil, err
	}
	resp, err := s.answer(req, p, &st, sp)
	if err == nil {
		s.mu.Lock()
		s.answered[req.Model]++
		s.mu.Unlock()
	}
	return resp, err
}
