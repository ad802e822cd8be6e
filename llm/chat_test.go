package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/policy"
)

// checkGolden compares got with testdata/name, rewriting it with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if updating() {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update after checking):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

func readResponse(t *testing.T, name string) ChatResponse {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var r ChatResponse
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// sampleState is a turn with one earlier turn.
func sampleState() policy.State {
	return policy.State{
		Instruction: "Your task is to: put a cool apple in fridge.",
		History:     []policy.Turn{{Observation: "You are in the middle of a room.\nYou see a fridge 1.", Action: "go to fridge 1"}},
		Observation: "The fridge 1 is closed.",
		Admissible:  []string{"open fridge 1", "go to countertop 1", "look"},
	}
}

// TestChatRequestGolden: the request a Player sends for a turn is the
// golden request: OpenAI's fields, logprobs on, the vLLM token-id flag,
// the turn's seed and the episode's temperature.
func TestChatRequestGolden(t *testing.T) {
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer k" {
			t.Errorf("request %s with auth %q", r.URL.Path, r.Header.Get("Authorization"))
		}
		body, _ = io.ReadAll(r.Body)
		w.Write([]byte(`{"choices":[{"index":0,"message":{"role":"assistant","content":"open fridge 1"},` +
			`"logprobs":{"content":[{"token":"token_id:9","logprob":-0.5}]}}]}`))
	}))
	defer srv.Close()
	c := newTestChat(t, srv.URL, ChatConfig{})
	s := sampleState()
	ch, err := c.choose(context.Background(), "Qwen2.5-7B-Instruct", &s, sampling{seed: TurnSeed(42, 1), temperature: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	if ch.action != "open fridge 1" || ch.index != 0 || ch.logProb != -0.5 || !slices.Equal(ch.tokenIDs, []int32{9}) {
		t.Errorf("choice %+v", ch)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, body, "", "  "); err != nil {
		t.Fatal(err)
	}
	out.WriteByte('\n')
	checkGolden(t, "chat_request.golden.json", out.Bytes())
}

func newTestChat(t *testing.T, url string, cfg ChatConfig) *chat {
	t.Helper()
	ep, err := NewEndpoint(EndpointConfig{URL: url + "/v1", APIKey: "k", Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	c, err := newChat(ep, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDecodeVLLMResponse: a vLLM answer (return_tokens_as_token_ids and
// return_token_ids) decodes to its text, token ids and log-probs, the
// same ids both ways.
func TestDecodeVLLMResponse(t *testing.T) {
	r := readResponse(t, "chat_response_vllm.json")
	if len(r.Choices) != 1 || r.Usage == nil || r.Usage.CompletionTokens != 5 {
		t.Fatalf("decoded %+v", r)
	}
	wantIDs := []int32{2508, 37581, 220, 16, 151645}
	wantLPs := []float32{-0.0625, -0.5, -0.001953125, 0, -0.25}
	for _, mode := range []TokenIDMode{TokenIDStrings, TokenIDField} {
		c, err := ParseCompletion(r.Choices[0], mode)
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if c.Text != "open fridge 1" || !slices.Equal(c.TokenIDs, wantIDs) || !slices.Equal(c.TokenLogProbs, wantLPs) || c.LogProb != -0.814453125 {
			t.Errorf("%s: got %+v, want ids %v, log-probs %v, sum -0.814453125", mode, c, wantIDs, wantLPs)
		}
	}
}

// TestDecodeOpenAIResponse: OpenAI's own answer (text tokens) gives the
// completion's log-prob without token ids, and is refused where ids are
// expected.
func TestDecodeOpenAIResponse(t *testing.T) {
	r := readResponse(t, "chat_response_openai.json")
	c, err := ParseCompletion(r.Choices[0], TokenIDNone)
	if err != nil {
		t.Fatal(err)
	}
	if want := -0.31725305 - 0.00001 - 1.25 - 0.125 - 0.5; math.Abs(c.LogProb-want) > 1e-12 || c.TokenIDs != nil || c.Text != "Go to cabinet 1." {
		t.Errorf("got %+v, want log-prob %v and no ids", c, want)
	}
	if _, err := ParseCompletion(r.Choices[0], TokenIDStrings); err == nil || !strings.Contains(err.Error(), "return_tokens_as_token_ids") {
		t.Errorf("text tokens under token-id-strings: got %v, want an error naming return_tokens_as_token_ids", err)
	}
	if _, err := ParseCompletion(r.Choices[0], TokenIDField); err == nil || !strings.Contains(err.Error(), "return_token_ids") {
		t.Errorf("no token_ids under token-ids-field: got %v, want an error naming return_token_ids", err)
	}
}

func TestParseCompletionErrors(t *testing.T) {
	tok := func(token string, lp float64) ChatChoice {
		return ChatChoice{Logprobs: &ChoiceLogprobs{Content: []TokenLogprob{{Token: token, Logprob: lp}}}}
	}
	for _, tc := range []struct {
		name string
		c    ChatChoice
		mode TokenIDMode
		want string
	}{
		{"no logprobs", ChatChoice{}, TokenIDStrings, "returned no logprobs"},
		{"empty content", ChatChoice{Logprobs: &ChoiceLogprobs{}}, TokenIDNone, "returned no logprobs"},
		{"positive log-prob", tok("token_id:1", 0.5), TokenIDStrings, "not a finite number ≤ 0"},
		{"huge negative", tok("token_id:1", -1e300), TokenIDStrings, "not a finite number ≤ 0"},
		{"negative id", tok("token_id:-3", -1), TokenIDStrings, "not a number"},
		{"id over int32", tok("token_id:4294967296", -1), TokenIDStrings, "not a number"},
		{"text token", tok("open", -1), TokenIDStrings, "does not read"},
		{"ids missing", tok("x", -1), TokenIDField, "0 token ids for 1 logprobs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCompletion(tc.c, tc.mode)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if _, err := ParseCompletion(ChatChoice{}, TokenIDNone); !errors.Is(err, ErrNoLogprobs) {
		t.Errorf("got %v, want ErrNoLogprobs", err)
	}
	c, err := ParseCompletion(tok("token_id:7", 5e-5), TokenIDStrings)
	if err != nil || c.LogProb != 0 || c.TokenLogProbs[0] != 0 {
		t.Errorf("a log-prob rounded just above 0: got %+v, %v; want it read as 0", c, err)
	}
}

// TestMessageContentForms: content may be a string, null or text parts.
func TestMessageContentForms(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{`{"role":"user","content":"hi"}`, "hi", ""},
		{`{"role":"assistant","content":null}`, "", ""},
		{`{"role":"user"}`, "", ""},
		{`{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`, "ab", ""},
		{`{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}`, "", "only text parts"},
		{`{"role":"user","content":3}`, "", "neither a string"},
	} {
		var m ChatMessage
		err := json.Unmarshal([]byte(tc.in), &m)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: got %v, want an error containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || m.Content != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.in, m.Content, err, tc.want)
		}
	}
}
