package llmserve

import (
	"flag"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/rspo-dev/rspo/llm"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestStreamGolden: a two-choice answer with log-probs, token ids and
// usage streams as OpenAI streams it, byte for byte the golden file: the
// role, content and finish chunks of each choice, the usage chunk, [DONE].
func TestStreamGolden(t *testing.T) {
	tok := func(a string, lp float64) *llm.ChoiceLogprobs {
		return &llm.ChoiceLogprobs{Content: []llm.TokenLogprob{{Token: a, Logprob: lp, Bytes: []int{int(a[0])},
			TopLogprobs: []llm.TopLogprob{{Token: "look", Logprob: -0.25, Bytes: []int{'l'}}}}}}
	}
	resp := &llm.ChatResponse{ID: "chatcmpl-rspo-1", Object: "chat.completion", Created: 1700000000, Model: "r1-v3",
		Choices: []llm.ChatChoice{
			{Index: 0, Message: llm.ChatMessage{Role: "assistant", Content: "look"}, Logprobs: tok("look", -0.25), FinishReason: "stop", TokenIDs: []int64{12}},
			{Index: 1, Message: llm.ChatMessage{Role: "assistant", Content: "open fridge 1"}, Logprobs: tok("open fridge 1", -1.5), FinishReason: "stop", TokenIDs: []int64{34}},
		},
		Usage: &llm.Usage{PromptTokens: 40, CompletionTokens: 2, TotalTokens: 42}}
	rec := httptest.NewRecorder()
	writeStream(rec, resp, true)
	if ct := rec.Header().Get("Content-Type"); ct != "text/event-stream; charset=utf-8" || rec.Code != 200 {
		t.Errorf("status %d, content type %q", rec.Code, ct)
	}
	golden := filepath.Join("testdata", "stream.golden")
	if *update {
		if err := os.WriteFile(golden, rec.Body.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.Body.String(); got != string(want) {
		t.Errorf("stream differs from %s (rerun with -update after checking):\n%s", golden, got)
	}
	for _, c := range chunks(resp, false) {
		if c.Usage != nil || len(c.Choices) != 1 {
			t.Errorf("without include_usage: chunk %+v", c)
		}
	}
}
