package llmserve_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/llm"
	"github.com/rspo-dev/rspo/llm/llmserve"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/prm"
)

func state() policy.State {
	return policy.State{Instruction: "Your task is to: put a clean mug in cabinet.", Observation: "You see a mug 1 and a sink 1.",
		Admissible: []string{"take mug 1", "go to sink 1", "look", "inventory"}}
}

func requestBody(t testing.TB, mutate func(*llm.ChatRequest)) []byte {
	t.Helper()
	r, err := llm.NewRenderer(llm.Template{})
	if err != nil {
		t.Fatal(err)
	}
	s := state()
	msgs, err := r.Render(&s)
	if err != nil {
		t.Fatal(err)
	}
	seed := int64(9)
	req := llm.ChatRequest{Model: "pi", Messages: msgs, Seed: &seed, Logprobs: true}
	if mutate != nil {
		mutate(&req)
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func post(t *testing.T, f *fixture, body []byte) (int, []byte) {
	t.Helper()
	res, err := http.Post(f.srv.URL+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// TestChoices: n choices, each one token whose log-prob is the policy's,
// top_logprobs in order, usage, both token-id forms.
func TestChoices(t *testing.T) {
	f := newFixture(t, 1)
	s := state()
	_, lps, err := f.p.Distribution(&s)
	if err != nil {
		t.Fatal(err)
	}
	code, b := post(t, f, requestBody(t, func(r *llm.ChatRequest) {
		r.N, r.TopLogprobs, r.ReturnTokensAsTokenIDs, r.ReturnTokenIDs = 5, 3, true, true
	}))
	if code != 200 {
		t.Fatalf("%d: %s", code, b)
	}
	var resp llm.ChatResponse
	if err := json.Unmarshal(b, &resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.Choices) != 5 || resp.Object != "chat.completion" || resp.Model != "pi" || resp.Usage == nil || resp.Usage.CompletionTokens != 5 {
		t.Fatalf("answer %s", b)
	}
	for i, c := range resp.Choices {
		comp, err := llm.ParseCompletion(c, llm.TokenIDStrings)
		if err != nil {
			t.Fatal(err)
		}
		a, idx := llm.ParseAction(c.Message.Content, s.Admissible)
		if idx < 0 || a != c.Message.Content || c.Index != i || c.FinishReason != "stop" {
			t.Fatalf("choice %d: %+v", i, c)
		}
		if comp.LogProb != lps[idx] || comp.TokenIDs[0] != llmserve.TokenID(a) || c.TokenIDs[0] != int64(comp.TokenIDs[0]) {
			t.Errorf("choice %d: log-prob %v id %v, want %v and %v", i, comp.LogProb, comp.TokenIDs, lps[idx], llmserve.TokenID(a))
		}
		top := c.Logprobs.Content[0].TopLogprobs
		if len(top) != 3 || top[0].Logprob < top[1].Logprob || top[1].Logprob < top[2].Logprob || string(bytesOf(c.Logprobs.Content[0].Bytes)) != a {
			t.Errorf("choice %d: top logprobs %+v", i, top)
		}
	}
}

func bytesOf(v []int) []byte {
	b := make([]byte, len(v))
	for i, x := range v {
		b[i] = byte(x)
	}
	return b
}

// TestGreedyAndSeeds: temperature 0 takes the most probable action; equal
// seeds answer equally; no logprobs unless asked.
func TestGreedyAndSeeds(t *testing.T) {
	f := newFixture(t, 1)
	s := state()
	probs, _, _ := f.p.Distribution(&s)
	zero := 0.0
	_, b := post(t, f, requestBody(t, func(r *llm.ChatRequest) { r.Temperature, r.N = &zero, 3 }))
	var resp llm.ChatResponse
	json.Unmarshal(b, &resp)
	for _, c := range resp.Choices {
		if c.Message.Content != s.Admissible[policy.Argmax(probs)] {
			t.Errorf("greedy answered %q", c.Message.Content)
		}
	}
	_, b1 := post(t, f, requestBody(t, func(r *llm.ChatRequest) { r.N = 8 }))
	_, b2 := post(t, f, requestBody(t, func(r *llm.ChatRequest) { r.N = 8 }))
	var r1, r2 llm.ChatResponse
	json.Unmarshal(b1, &r1)
	json.Unmarshal(b2, &r2)
	for i := range r1.Choices {
		if r1.Choices[i].Message.Content != r2.Choices[i].Message.Content {
			t.Errorf("seeded choice %d: %q then %q", i, r1.Choices[i].Message.Content, r2.Choices[i].Message.Content)
		}
	}
	_, b = post(t, f, requestBody(t, func(r *llm.ChatRequest) { r.Logprobs = false }))
	resp = llm.ChatResponse{}
	json.Unmarshal(b, &resp)
	if resp.Choices[0].Logprobs != nil {
		t.Errorf("logprobs without being asked: %s", b)
	}
}

// TestErrors: every refusal is an OpenAI error object with its status
// (400, 404, 413) and the parameter at fault.
func TestErrors(t *testing.T) {
	f := newFixture(t, 1)
	for _, tc := range []struct {
		name        string
		body        []byte
		code        int
		want, param string
	}{
		{"not json", []byte("{"), 400, "invalid_json", ""},
		{"unknown model", requestBody(t, func(r *llm.ChatRequest) { r.Model = "gpt-9" }), 404, "model_not_found", "model"},
		{"foreign conversation", requestBody(t, func(r *llm.ChatRequest) { r.Messages = []llm.ChatMessage{{Role: "user", Content: "hi"}} }), 400, "unparsable_conversation", "messages"},
		{"n", requestBody(t, func(r *llm.ChatRequest) { r.N = 1000 }), 400, "invalid_n", "n"},
		{"temperature", requestBody(t, func(r *llm.ChatRequest) { x := -1.0; r.Temperature = &x }), 400, "invalid_temperature", "temperature"},
		{"top logprobs", requestBody(t, func(r *llm.ChatRequest) { r.TopLogprobs = 21 }), 400, "invalid_top_logprobs", "top_logprobs"},
		{"max completion tokens", requestBody(t, func(r *llm.ChatRequest) { r.MaxCompletionTokens = -1 }), 400, "invalid_max_tokens", "max_completion_tokens"},
		{"stream options without stream", requestBody(t, func(r *llm.ChatRequest) { r.StreamOptions = &llm.StreamOptions{IncludeUsage: true} }), 400, "invalid_stream_options", "stream_options"},
		{"unknown model, streamed", requestBody(t, func(r *llm.ChatRequest) { r.Model, r.Stream = "gpt-9", true }), 404, "model_not_found", "model"},
		{"too large", bytes.Repeat([]byte(" "), llmserve.MaxRequestBytes+1), 413, "request_too_large", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, b := post(t, f, tc.body)
			var e struct{ Error llm.APIError }
			err := json.Unmarshal(b, &e)
			param := ""
			if e.Error.Param != nil {
				param = *e.Error.Param
			}
			if err != nil || code != tc.code || e.Error.Code == nil || *e.Error.Code != tc.want || e.Error.Message == "" ||
				e.Error.Type != "invalid_request_error" || param != tc.param {
				t.Errorf("got %d %s, want %d with code %s and param %q", code, b, tc.code, tc.want, tc.param)
			}
		})
	}
	for _, tc := range []struct {
		method, path string
		code         int
	}{{"GET", "/v1/chat/completions", 405}, {"GET", "/v1/completions", 404}, {"POST", "/v1/models", 405}} {
		req, _ := http.NewRequest(tc.method, f.srv.URL+tc.path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tc.code || !strings.Contains(string(b), `"error"`) {
			t.Errorf("%s %s: %d %s, want %d", tc.method, tc.path, res.StatusCode, b, tc.code)
		}
	}
}

// TestModels: GET /v1/models lists the served names; a removed model is
// gone from the list and answers 404.
func TestModels(t *testing.T) {
	f := newFixture(t, 1)
	s := llmserve.New()
	for i := range 3 {
		s.Serve(fmt.Sprintf("run-v%d", i), f.p)
	}
	s.Remove("run-v1")
	if got := s.Models(); strings.Join(got, ",") != "run-v0,run-v2" {
		t.Errorf("models %v", got)
	}
	f.srv.Config.Handler = s
	res, err := http.Get(f.srv.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var list llmserve.ModelList
	if err := json.NewDecoder(res.Body).Decode(&list); err != nil || list.Object != "list" || len(list.Data) != 2 ||
		list.Data[0].ID != "run-v0" || list.Data[1].Object != "model" {
		t.Errorf("list %+v, %v", list, err)
	}
	if code, _ := post(t, f, requestBody(t, func(r *llm.ChatRequest) { r.Model = "run-v1" })); code != 404 {
		t.Errorf("a removed model answered %d", code)
	}
	post(t, f, requestBody(t, func(r *llm.ChatRequest) { r.Model = "run-v2" }))
	post(t, f, requestBody(t, func(r *llm.ChatRequest) { r.Model = "run-v2"; r.N = -1 }))
	if got := s.Answered(); len(got) != 1 || got["run-v2"] != 1 {
		t.Errorf("answered %v, want run-v2 once", got)
	}
}

// FuzzComplete: any request body is answered or refused with a status,
// never a panic; what is answered has one valid token per choice.
func FuzzComplete(f *testing.F) {
	fx := newFixture(f, 1)
	s := llmserve.New()
	s.Serve("pi", fx.p)
	f.Add(requestBody(f, nil))
	f.Add(requestBody(f, func(r *llm.ChatRequest) { r.N, r.TopLogprobs = 3, 2 }))
	f.Add([]byte(`{"model":"pi","messages":[{"role":"user","content":[{"type":"text","text":"Task: t\n\nObservation:\no\n\nAdmissible actions:\n- a\n\nAnswer with exactly one admissible action."}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		resp, err := s.Complete(body)
		if err != nil {
			return
		}
		for _, c := range resp.Choices {
			if c.Logprobs == nil {
				continue
			}
			if lp := c.Logprobs.Content[0].Logprob; len(c.Logprobs.Content) != 1 || lp > 0 || math.IsNaN(lp) {
				t.Fatalf("choice %+v", c)
			}
		}
	})
}

// TestEmbeddingsBesideChat: a server given an embeddings handler serves
// POST /v1/embeddings to the embeddings client, lists the embedding model
// beside the policies, and still answers 404 there without one.
func TestEmbeddingsBesideChat(t *testing.T) {
	f := newFixture(t, 1)
	s := llmserve.New()
	s.Serve("run-v0", f.p)
	f.srv.Config.Handler = s
	ep, err := llm.NewEndpoint(llm.EndpointConfig{URL: f.srv.URL + "/v1", Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ep.Embed(t.Context(), "hash", []string{"a mug"}); err == nil {
		t.Fatal("a server with no embeddings handler answered /v1/embeddings")
	}
	embed, err := llm.HashEmbedding(prm.HashProjectionConfig{Dim: 16})
	if err != nil {
		t.Fatal(err)
	}
	h, err := llm.NewEmbedHandler(llm.EmbedHandlerConfig{Model: "hash", Embed: embed})
	if err != nil {
		t.Fatal(err)
	}
	s.ServeEmbeddings(h)
	vecs, err := ep.Embed(t.Context(), "hash", []string{"a mug", "a sink"})
	if err != nil || len(vecs) != 2 || len(vecs[0]) != 16 {
		t.Fatalf("embeddings: %d vectors (err %v), want 2 of length 16", len(vecs), err)
	}
	if want := embed("a sink"); fmt.Sprint(vecs[1]) != fmt.Sprint(want) {
		t.Errorf("the second vector is not the embedding of its input")
	}
	res, err := http.Get(f.srv.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var list llmserve.ModelList
	if err := json.NewDecoder(res.Body).Decode(&list); err != nil || len(list.Data) != 2 || list.Data[0].ID != "hash" || list.Data[1].ID != "run-v0" {
		t.Errorf("models %+v (%v), want hash and run-v0", list.Data, err)
	}
}
