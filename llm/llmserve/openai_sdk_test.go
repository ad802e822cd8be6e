package llmserve_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/rspo-dev/rspo/llm"
	"github.com/rspo-dev/rspo/llm/llmserve"
	"github.com/rspo-dev/rspo/policy"
)

// sdkClient is the official OpenAI Go SDK pointed at url (…/v1), without
// retries, so a refusal surfaces at once.
func sdkClient(url, key string) openai.Client {
	return openai.NewClient(option.WithBaseURL(url), option.WithAPIKey(key), option.WithMaxRetries(0))
}

// sdkMessages converts the default template's messages, the first one
// sent as role.
func sdkMessages(t *testing.T, first string) []openai.ChatCompletionMessageParamUnion {
	t.Helper()
	r, err := llm.NewRenderer(llm.Template{})
	if err != nil {
		t.Fatal(err)
	}
	s := state()
	s.History = []policy.Turn{{Observation: "You are in the kitchen.", Action: "go to sink 1"}}
	msgs, err := r.Render(&s)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]openai.ChatCompletionMessageParamUnion, len(msgs))
	for i, m := range msgs {
		switch {
		case i == 0 && first == "developer":
			out[i] = openai.DeveloperMessage(m.Content)
		case m.Role == "system":
			out[i] = openai.SystemMessage(m.Content)
		case m.Role == "user":
			out[i] = openai.UserMessage(m.Content)
		default:
			out[i] = openai.AssistantMessage(m.Content)
		}
	}
	return out
}

// TestOpenAISDKCompletes: the official SDK completes with n choices and
// log-probs, with a system or a developer message, and its streamed answer
// (with include_usage), accumulated by the SDK, is the unstreamed answer of
// the same seed: the same actions, log-probs, alternatives and usage.
func TestOpenAISDKCompletes(t *testing.T) {
	f := newFixture(t, 1)
	c := sdkClient(f.srv.URL+"/v1", "k")
	for _, role := range []string{"system", "developer"} {
		t.Run(role, func(t *testing.T) {
			params := openai.ChatCompletionNewParams{Model: "pi", Messages: sdkMessages(t, role), N: openai.Int(4),
				Seed: openai.Int(17), Logprobs: openai.Bool(true), TopLogprobs: openai.Int(2), MaxCompletionTokens: openai.Int(16)}
			whole, err := c.Chat.Completions.New(t.Context(), params)
			if err != nil {
				t.Fatal(err)
			}
			if len(whole.Choices) != 4 || whole.Usage.CompletionTokens != 4 {
				t.Fatalf("answer: %d choices, usage %+v", len(whole.Choices), whole.Usage)
			}
			params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
			stream := c.Chat.Completions.NewStreaming(t.Context(), params)
			var acc openai.ChatCompletionAccumulator
			chunks := 0
			for stream.Next() {
				if !acc.AddChunk(stream.Current()) {
					t.Fatalf("the SDK refused chunk %d: %s", chunks, stream.Current().RawJSON())
				}
				chunks++
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if chunks != 3*4+1 || acc.Model != "pi" || !strings.HasPrefix(acc.ID, "chatcmpl-") {
				t.Errorf("%d chunks (id %q, model %q), want 13 of pi", chunks, acc.ID, acc.Model)
			}
			sameCompletion(t, acc.ChatCompletion, *whole)
		})
	}
}

// sameCompletion compares what a client reads of two answers: each
// choice's text, finish reason and token log-probs, and the usage.
func sameCompletion(t *testing.T, got, want openai.ChatCompletion) {
	t.Helper()
	if len(got.Choices) != len(want.Choices) || got.Usage.TotalTokens != want.Usage.TotalTokens || got.Usage.TotalTokens == 0 {
		t.Fatalf("streamed %d choices, %d tokens of usage; want %d, %d", len(got.Choices), got.Usage.TotalTokens, len(want.Choices), want.Usage.TotalTokens)
	}
	for i, g := range got.Choices {
		w := want.Choices[i]
		if g.Index != int64(i) || g.Message.Content != w.Message.Content || g.FinishReason != w.FinishReason ||
			len(g.Logprobs.Content) != 1 || len(w.Logprobs.Content) != 1 {
			t.Errorf("choice %d: streamed %q (%s, %d tokens), whole %q (%s)", i, g.Message.Content, g.FinishReason,
				len(g.Logprobs.Content), w.Message.Content, w.FinishReason)
			continue
		}
		gt, wt := g.Logprobs.Content[0], w.Logprobs.Content[0]
		if gt.Token != wt.Token || gt.Logprob != wt.Logprob || gt.Logprob >= 0 || len(gt.TopLogprobs) != 2 ||
			!slices.EqualFunc(gt.TopLogprobs, wt.TopLogprobs, func(a, b openai.ChatCompletionTokenLogprobTopLogprob) bool {
				return a.Token == b.Token && a.Logprob == b.Logprob
			}) {
			t.Errorf("choice %d: streamed log-probs %+v, whole %+v", i, gt, wt)
		}
	}
}

// TestOpenAISDKModels: the SDK lists the served models and retrieves one,
// a name with a slash included; an unknown one is its 404 error with
// OpenAI's code.
func TestOpenAISDKModels(t *testing.T) {
	f := newFixture(t, 1)
	s := llmserve.New()
	s.Serve("r1-v0", f.p)
	s.Serve("team/latest", f.p)
	f.srv.Config.Handler = s
	c := sdkClient(f.srv.URL+"/v1", "k")
	page, err := c.Models.List(t.Context())
	if err != nil || len(page.Data) != 2 || page.Data[0].ID != "r1-v0" || page.Data[1].ID != "team/latest" {
		t.Fatalf("list: %+v, %v", page, err)
	}
	for _, name := range []string{"r1-v0", "team/latest"} {
		m, err := c.Models.Get(t.Context(), name)
		if err != nil || m.ID != name || m.OwnedBy != "rspo" || m.Object != "model" {
			t.Errorf("retrieve %s: %+v, %v", name, m, err)
		}
	}
	_, err = c.Models.Get(t.Context(), "gpt-9")
	if e := apiError(t, err); e.StatusCode != http.StatusNotFound || e.Code != "model_not_found" {
		t.Errorf("retrieve an unknown model: %d %q", e.StatusCode, e.Code)
	}
}

// TestOpenAISDKErrors: refusals reach the SDK as its *openai.Error with
// the status, code and parameter: before a stream starts as well.
func TestOpenAISDKErrors(t *testing.T) {
	f := newFixture(t, 1)
	c := sdkClient(f.srv.URL+"/v1", "k")
	params := openai.ChatCompletionNewParams{Model: "pi", Messages: sdkMessages(t, "system"), N: openai.Int(500)}
	_, err := c.Chat.Completions.New(t.Context(), params)
	if e := apiError(t, err); e.StatusCode != 400 || e.Code != "invalid_n" || e.Param != "n" || e.Type != "invalid_request_error" {
		t.Errorf("n = 500: %d %q %q %q", e.StatusCode, e.Code, e.Param, e.Type)
	}
	params.N, params.Model = openai.Int(1), "gpt-9"
	stream := c.Chat.Completions.NewStreaming(t.Context(), params)
	if stream.Next() {
		t.Fatal("a stream of an unknown model delivered a chunk")
	}
	if e := apiError(t, stream.Err()); e.StatusCode != 404 || e.Code != "model_not_found" {
		t.Errorf("streaming an unknown model: %d %q", e.StatusCode, e.Code)
	}
}

// TestAPIKey: behind RequireAPIKey the SDK with the key lists the models;
// with another key, or none, every route answers 401 invalid_api_key with
// a Bearer challenge; an empty key is refused when the handler is built.
func TestAPIKey(t *testing.T) {
	f := newFixture(t, 1)
	s := llmserve.New()
	s.Serve("pi", f.p)
	if _, err := llmserve.RequireAPIKey("", s); !errors.Is(err, llmserve.ErrEmptyAPIKey) {
		t.Errorf("empty key: %v", err)
	}
	h, err := llmserve.RequireAPIKey("s3cret", s)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	good, bad := sdkClient(srv.URL+"/v1", "s3cret"), sdkClient(srv.URL+"/v1", "s3cre")
	if page, err := good.Models.List(t.Context()); err != nil || len(page.Data) != 1 {
		t.Errorf("with the key: %+v, %v", page, err)
	}
	_, err = bad.Chat.Completions.New(t.Context(),
		openai.ChatCompletionNewParams{Model: "pi", Messages: sdkMessages(t, "system")})
	if e := apiError(t, err); e.StatusCode != 401 || e.Code != "invalid_api_key" {
		t.Errorf("another key: %d %q", e.StatusCode, e.Code)
	}
	for _, auth := range []string{"", "Basic czNjcmV0", "Bearer ", "bearer s3cret x"} {
		for _, path := range []string{"/v1/models", "/v1/models/pi", "/v1/nowhere"} {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != 401 || res.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s with %q: %d, want 401 with a challenge", path, auth, res.StatusCode)
			}
		}
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/models/pi", nil)
	req.Header.Set("Authorization", "bearer s3cret")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 200 {
		t.Errorf("the scheme's name in lower case: %v, %v", res, err)
	} else {
		res.Body.Close()
	}
}

// apiError is err as the SDK's error type.
func apiError(t *testing.T, err error) *openai.Error {
	t.Helper()
	var e *openai.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v (%T), want an *openai.Error", err, err)
	}
	return e
}
