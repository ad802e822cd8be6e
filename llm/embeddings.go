package llm

import (
	"context"
	"fmt"
)

// EmbeddingsRequest is the body of POST /embeddings (OpenAI's embeddings
// API; vLLM serves it for embedding models run with --runner pooling,
// --task embed before 0.10).
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
	return resp.Vectors(len(inputs))
}

// Vectors returns the response's embeddings in input order, checking that
// there is one per input of n, each index once, all of one non-zero length.
func (r *EmbeddingsResponse) Vectors(n int) ([][]float32, error) {
	if len(r.Data) != n {
		return nil, fmt.Errorf("llm: /embeddings answered %d vectors for %d inputs", len(r.Data), n)
	}
	out := make([][]float32, n)
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, fmt.Errorf("llm: /embeddings answered index %d twice or out of range 0..%d", d.Index, n-1)
		}
		if len(d.Embedding) == 0 || len(d.Embedding) != len(r.Data[0].Embedding) {
			return nil, fmt.Errorf("llm: /embeddings answered vectors of lengths %d and %d", len(d.Embedding), len(r.Data[0].Embedding))
		}
		out[d.Index] = d.Embedding
	}
	return out, nil
}

// EmbeddingDim asks model for the embedding of a short text and returns
// its length: what EmbeddingsFeaturizerConfig.Dim must be.
func (e *Endpoint) EmbeddingDim(ctx context.Context, model string) (int, error) {
	v, err := e.Embed(ctx, model, []string{"rspo dimension probe"})
	if err != nil {
		return 0, err
	}
	return len(v[0]), nil
}
