package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/envs"
	_ "github.com/rspo-dev/rspo/envs/household"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/rollout"
)

// fakeServer answers every chat request with reply(req).
func fakeServer(t *testing.T, reply func(ChatRequest) (int, any)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req ChatRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("request: %v", err)
		}
		code, body := reply(req)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// textReply answers text with one token of log-prob lp.
func textReply(text string, lp float64) ChatResponse {
	return ChatResponse{Object: "chat.completion", Choices: []ChatChoice{{Message: ChatMessage{Role: "assistant", Content: text},
		Logprobs: &ChoiceLogprobs{Content: []TokenLogprob{{Token: TokenIDString(5), Logprob: lp}}}, FinishReason: "stop"}}}
}

func household(t testing.TB) (envs.Env, envs.Task) {
	t.Helper()
	env, err := envs.New("household", map[string]string{"preset": "easy"})
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := env.Tasks(envs.SplitTrain, 1, 9)
	if err != nil {
		t.Fatal(err)
	}
	return env, tasks[0]
}

func newPlayer(t *testing.T, url string, ecfg EndpointConfig, cfg ChatConfig) *Player {
	t.Helper()
	ecfg.URL = url + "/v1"
	ep, err := NewEndpoint(ecfg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlayer(ep, cfg, "m", 3)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func episode(task envs.Task, maxSteps int) rollout.Episode {
	return rollout.Episode{Task: task, Opts: policy.RolloutOptions{Seed: 5, Run: "r", Producer: "a", GroupID: "g", MaxSteps: maxSteps}}
}

// TestInadmissibleFallback: a reply that matches no admissible action is
// sent to the environment as it is; the step records it with index −1,
// and the trajectory validates.
func TestInadmissibleFallback(t *testing.T) {
	srv := fakeServer(t, func(ChatRequest) (int, any) { return 200, textReply("  dance wildly\n", -3) })
	env, task := household(t)
	tr, err := newPlayer(t, srv.URL, EndpointConfig{}, ChatConfig{}).Play(context.Background(), env, episode(task, 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	for i, s := range tr.Steps {
		if s.Action != "dance wildly" || s.ActionIndex != -1 || s.BehaviorLogProb != -3 || len(s.Admissible) == 0 {
			t.Fatalf("step %d: %+v", i, s)
		}
	}
	if tr.Success || len(tr.Steps) == 0 {
		t.Errorf("an agent that never acts admissibly: success %v after %d steps", tr.Success, len(tr.Steps))
	}
	if tr.PolicyVersion != 3 || tr.Run != "r" || tr.Producer != "a" || tr.GroupID != "g" {
		t.Errorf("provenance: %+v", tr)
	}
}

// TestRequestsPerTurn: each turn's request carries the turn's seed, the
// history so far and the episode's temperature; greedy asks for 0.
func TestRequestsPerTurn(t *testing.T) {
	var reqs []ChatRequest
	srv := fakeServer(t, func(r ChatRequest) (int, any) {
		reqs = append(reqs, r)
		return 200, textReply("look", -0.25)
	})
	env, task := household(t)
	ep := episode(task, 3)
	ep.Opts.Temperature = 0.5
	_, err := newPlayer(t, srv.URL, EndpointConfig{MaxConcurrent: 1}, ChatConfig{}).Play(context.Background(), env, ep)
	if !errors.Is(err, policy.ErrEpisodeTooLong) {
		t.Fatalf("got %v, want the step cap", err)
	}
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for i, r := range reqs {
		if *r.Seed != TurnSeed(5, i) || *r.Temperature != 0.5 || !r.Logprobs || len(r.Messages) != 2+2*i || r.Model != "m" {
			t.Errorf("request %d: seed %d, temperature %v, %d messages", i, *r.Seed, *r.Temperature, len(r.Messages))
		}
		if i > 0 && r.Messages[len(r.Messages)-2].Content != "look" {
			t.Errorf("request %d: the last assistant message is %q, want the action taken", i, r.Messages[len(r.Messages)-2].Content)
		}
	}
	reqs = nil
	ep.Opts.Temperature, ep.Opts.Greedy = 0, true
	newPlayer(t, srv.URL, EndpointConfig{}, ChatConfig{}).Play(context.Background(), env, ep)
	if reqs[0].Temperature == nil || *reqs[0].Temperature != 0 {
		t.Errorf("greedy: temperature %v, want 0", reqs[0].Temperature)
	}
}

// TestNoLogprobs: a server that returns no log-probs fails the episode
// with ErrNoLogprobs, which is not retried.
func TestNoLogprobs(t *testing.T) {
	srv := fakeServer(t, func(ChatRequest) (int, any) {
		r := textReply("look", 0)
		r.Choices[0].Logprobs = nil
		return 200, r
	})
	env, task := household(t)
	_, err := newPlayer(t, srv.URL, EndpointConfig{}, ChatConfig{}).Play(context.Background(), env, episode(task, 0))
	if !errors.Is(err, ErrNoLogprobs) || errors.Is(err, rollout.ErrUnavailable) || !strings.Contains(err.Error(), "logprobs: true") {
		t.Errorf("got %v, want ErrNoLogprobs saying how to get them", err)
	}
}

// TestRetriesOn503: 503 answers are retried; the episode goes on once the
// server recovers. A server that stays down fails it as unavailable.
func TestRetriesOn503(t *testing.T) {
	var calls atomic.Int32
	srv := fakeServer(t, func(ChatRequest) (int, any) {
		if calls.Add(1)%3 != 0 {
			return 503, map[string]any{"error": map[string]any{"message": "overloaded", "type": "server_error"}}
		}
		return 200, textReply("look", -1)
	})
	env, task := household(t)
	_, err := newPlayer(t, srv.URL, EndpointConfig{Retries: 2}, ChatConfig{}).Play(context.Background(), env, episode(task, 2))
	if !errors.Is(err, policy.ErrEpisodeTooLong) {
		t.Fatalf("got %v, want two steps played, then the step cap", err)
	}
	if got := calls.Load(); got != 6 {
		t.Errorf("%d calls for 2 steps, want 6", got)
	}
	down := fakeServer(t, func(ChatRequest) (int, any) {
		return 503, map[string]any{"error": map[string]any{"message": "overloaded", "type": "server_error"}}
	})
	_, err = newPlayer(t, down.URL, EndpointConfig{Retries: 1}, ChatConfig{}).Play(context.Background(), env, episode(task, 0))
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 503 || se.Message != "overloaded" || !errors.Is(err, rollout.ErrUnavailable) {
		t.Errorf("got %v, want an unavailable 503 StatusError", err)
	}
	bad := fakeServer(t, func(ChatRequest) (int, any) {
		return 400, map[string]any{"error": map[string]any{"message": "bad", "type": "invalid_request_error"}}
	})
	_, err = newPlayer(t, bad.URL, EndpointConfig{}, ChatConfig{}).Play(context.Background(), env, episode(task, 0))
	if !errors.As(err, &se) || se.Code != 400 || errors.Is(err, rollout.ErrUnavailable) {
		t.Errorf("got %v, want a 400 StatusError that is not retried", err)
	}
}

// TestTimeout: an attempt that outlasts the endpoint's timeout fails (and
// is retried); the episode fails as unavailable.
func TestTimeout(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		io.Copy(io.Discard, r.Body) // so the server notices the client hanging up
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	env, task := household(t)
	_, err := newPlayer(t, srv.URL, EndpointConfig{Timeout: 50 * time.Millisecond, Retries: 1}, ChatConfig{}).
		Play(context.Background(), env, episode(task, 0))
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, rollout.ErrUnavailable) || calls.Load() != 2 {
		t.Errorf("got %v after %d calls, want a deadline error after 2", err, calls.Load())
	}
}

// TestChoiceCount: an answer with the wrong number of choices is refused.
func TestChoiceCount(t *testing.T) {
	srv := fakeServer(t, func(ChatRequest) (int, any) { return 200, ChatResponse{} })
	env, task := household(t)
	_, err := newPlayer(t, srv.URL, EndpointConfig{}, ChatConfig{}).Play(context.Background(), env, episode(task, 0))
	if err == nil || !strings.Contains(err.Error(), "0 choices for n = 1") {
		t.Errorf("got %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	err := ChatConfig{MaxTokens: -1, Candidates: 1, TokenIDs: "ids", Template: Template{Prompt: "{{.Nope}}"}}.Validate()
	for _, want := range []string{"max tokens -1", "candidates 1", `token id mode "ids"`, "chat template prompt"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want it to mention %q", err, want)
		}
	}
	if err := (ChatConfig{}).Validate(); err != nil {
		t.Errorf("the zero config: %v", err)
	}
	if _, err := NewPlayer(nil, ChatConfig{}, "m", 0); err == nil {
		t.Error("a player without an endpoint")
	}
}
