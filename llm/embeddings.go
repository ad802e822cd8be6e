package llm

import (
	"context"
	"fmt"
)

// EmbeddingsRequest is the body of POST /embeddings (OpenAI's embeddings
// API; vLLM serves it for embedding models with --task embed).
type EmbeddingsRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
	// EncodingFormat is "float": rspo never asks for base64.
	EncodingFormat string `json:"encoding_format,omitempty"`
}

// EmbeddingsResponse is the answer of POST /embeddings.
type EmbeddingsResponse struct {
	Object string      `json:"object"`
	Model  string      `json:"model"`
	Data   []Embedding `json:"data"`
	Usage  Usage       `json:"usage"`
}

// Embedding is one input's vector; Index is the input's position.
type Embedding struct {
	Object    string    `json:"object"`
	Index     int       `json:"index"`
	Embedding []float32 `json:"embedding"`
}

// Usage counts the tokens a request consumed.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens,omitempty"`
	TotalTokens      int `json:"total_tokens"`
}

// Embed returns the embedding of each input, in input order, from model.
// It fails when the server answers with a different number of vectors,
// vectors of different lengths, or indices out of range.
func (e *Endpoint) Embed(ctx context.Context, model string, inputs []string) ([][]float32, error) {
	if len(inputs) == 0 {
		return nil, nil
	}
	var resp EmbeddingsResponse
	if err := e.PostJSON(ctx, "/embeddings", EmbeddingsRequest{Model: model, Input: inputs, EncodingFormat: "float"}, &resp); err != nil {
		return nil, err
	}
	if len(resp.Data) != len(inputs) {
		return nil, fmt.Errorf("llm: /embeddings answered %d vectors for %d inputs", len(resp.Data), len(inputs))
	}
	out := make([][]float32, len(inputs))
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(inputs) || out[d.Index] != nil {
			return nil, fmt.Errorf("llm: /embeddings answered index %d twice or out of range 0..%d", d.Index, len(inputs)-1)
		}
		if len(d.Embedding) == 0 || len(d.Embedding) != len(resp.Data[0].Embedding) {
			return nil, fmt.Errorf("llm: /embeddings answered vectors of lengths %d and %d", len(d.Embedding), len(resp.Data[0].Embedding))
		}
		out[d.Index] = d.Embedding
	}
	return out, nil
}
