package llmserve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/rspo-dev/rspo/llm"
)

// A streamed answer (stream: true) is server-sent events, each a
// chat.completion.chunk object on a "data: " line, ending with
// "data: [DONE]", as OpenAI streams. Every choice of a one-token answer
// takes three chunks, in the order OpenAI sends them: the role, the
// content with its log-probs (and vLLM's token_ids when asked), then the
// finish reason. With stream_options.include_usage a last chunk with no
// choices carries the usage. The answer is computed before the first
// byte is written, so every refusal is still an error answer with its
// status, never a broken stream.

// chunk is one chat.completion.chunk object.
type chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []chunkChoice `json:"choices"`
	Usage   *llm.Usage    `json:"usage,omitempty"`
}

// chunkChoice is one choice's part of a chunk.
type chunkChoice struct {
	Index        int                 `json:"index"`
	Delta        delta               `json:"delta"`
	Logprobs     *llm.ChoiceLogprobs `json:"logprobs"`
	FinishReason *string             `json:"finish_reason"`
	TokenIDs     []int64             `json:"token_ids,omitempty"`
}

// delta is what a chunk adds to a choice's message; the role chunk
// carries an empty content, as OpenAI's does.
type delta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

// chunks splits resp into the chunks of its stream.
func chunks(resp *llm.ChatResponse, includeUsage bool) []chunk {
	head := func(cs ...chunkChoice) chunk {
		return chunk{ID: resp.ID, Object: "chat.completion.chunk", Created: resp.Created, Model: resp.Model, Choices: cs}
	}
	out := make([]chunk, 0, 3*len(resp.Choices)+1)
	empty := ""
	for _, c := range resp.Choices {
		out = append(out, head(chunkChoice{Index: c.Index, Delta: delta{Role: c.Message.Role, Content: &empty}}))
	}
	for _, c := range resp.Choices {
		content := c.Message.Content
		out = append(out, head(chunkChoice{Index: c.Index, Delta: delta{Content: &content}, Logprobs: c.Logprobs, TokenIDs: c.TokenIDs}))
	}
	for _, c := range resp.Choices {
		reason := c.FinishReason
		out = append(out, head(chunkChoice{Index: c.Index, FinishReason: &reason}))
	}
	if includeUsage && resp.Usage != nil {
		last := head()
		last.Choices, last.Usage = []chunkChoice{}, resp.Usage
		out = append(out, last)
	}
	return out
}

// writeStream answers with resp as a stream of server-sent events. The
// events are encoded before the status is written, so a failure is still
// a 500 error answer. A client gone mid-stream only ends the writing.
func writeStream(w http.ResponseWriter, resp *llm.ChatResponse, includeUsage bool) {
	var body bytes.Buffer
	for _, c := range chunks(resp, includeUsage) {
		b, err := json.Marshal(c)
		if err != nil {
			writeError(w, fmt.Errorf("llmserve: encode a chunk of the answer: %w", err))
			return
		}
		body.WriteString("data: ")
		body.Write(b)
		body.WriteString("\n\n")
	}
	body.WriteString("data: [DONE]\n\n")
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // proxies pass the events on as they come
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(body.Bytes()); err == nil {
		_ = http.NewResponseController(w).Flush()
	}
}
