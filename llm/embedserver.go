package llm

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/rspo-dev/rspo/prm"
)

// EmbedHandlerConfig configures EmbedHandler.
type EmbedHandlerConfig struct {
	// Model is the one model name the handler serves. Required.
	Model string
	// Embed embeds one text; it must be safe for concurrent use and return
	// finite vectors of one non-zero length. Required.
	Embed func(text string) []float32
	// MaxInputs bounds the inputs of one request (more: 413). Default
	// MaxEmbedBatch.
	MaxInputs int
	// MaxBodyBytes bounds a request body (more: 413). Default 8 MiB.
	MaxBodyBytes int64
}

// EmbedHandler serves an embedding function in OpenAI's embeddings API:
// POST …/embeddings and GET …/models, with OpenAI-shaped error objects
// (400 for a malformed body, 404 for another model, 405 for another
// method, 413 for too many inputs or too large a body, 500 when Embed
// returns an unusable vector). It is what `rspo serve policy` mounts at
// /v1/embeddings, and what tests serve a deterministic featurizer with.
type EmbedHandler struct {
	cfg EmbedHandlerConfig
}

var _ http.Handler = (*EmbedHandler)(nil)

// NewEmbedHandler returns the handler, or an error naming what to fix.
func NewEmbedHandler(cfg EmbedHandlerConfig) (*EmbedHandler, error) {
	var errs []error
	if cfg.Model == "" {
		errs = append(errs, errors.New("llm: embed handler: Model is empty: name the model it serves"))
	}
	if cfg.Embed == nil {
		errs = append(errs, errors.New("llm: embed handler: Embed is nil"))
	}
	if cfg.MaxInputs < 0 || cfg.MaxBodyBytes < 0 {
		errs = append(errs, errors.New("llm: embed handler: MaxInputs and MaxBodyBytes must be ≥ 0 (0: the defaults)"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if cfg.MaxInputs == 0 {
		cfg.MaxInputs = MaxEmbedBatch
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 8 << 20
	}
	return &EmbedHandler{cfg: cfg}, nil
}

// ServeHTTP routes a path ending in /embeddings to ServeEmbeddings and
// one ending in /models to ServeModels; anything else is a 404.
func (h *EmbedHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasSuffix(r.URL.Path, "/embeddings"):
		h.ServeEmbeddings(w, r)
	case strings.HasSuffix(r.URL.Path, "/models"):
		h.ServeModels(w, r)
	default:
		writeEmbedError(w, http.StatusNotFound, "invalid_request_error", "unknown_url", fmt.Sprintf("no route for %s", r.URL.Path))
	}
}

// HashEmbedding returns an embedding function that needs no model: the
// hash projection (prm.HashProjection with cfg) of the whole text, taken
// as one field. It is deterministic and safe for concurrent use: for tests,
// and for serving /v1/embeddings without a GPU.
func HashEmbedding(cfg prm.HashProjectionConfig) (func(text string) []float32, error) {
	hp, err := prm.NewHashProjection(cfg)
	if err != nil {
		return nil, err
	}
	return func(text string) []float32 {
		v := make([]float32, hp.Dim())
		hp.Features("", text, "", v)
		return v
	}, nil
}

// EmbedModelCard is one entry of GET /v1/models.
type EmbedModelCard struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// ModelCard is the handler's model as GET /v1/models lists it, for a
// server that lists it beside others.
func (h *EmbedHandler) ModelCard() EmbedModelCard {
	return EmbedModelCard{ID: h.cfg.Model, Object: "model", OwnedBy: "rspo"}
}

// ServeModels answers GET /v1/models with the handler's one model.
func (h *EmbedHandler) ServeModels(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		writeEmbedError(w, http.StatusMethodNotAllowed, "invalid_request_error", "method_not_allowed", "use GET")
		return
	}
	WriteJSON(w, http.StatusOK, struct {
		Object string           `json:"object"`
		Data   []EmbedModelCard `json:"data"`
	}{"list", []EmbedModelCard{h.ModelCard()}})
}

// ServeEmbeddings answers POST /v1/embeddings.
func (h *EmbedHandler) ServeEmbeddings(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeEmbedError(w, http.StatusMethodNotAllowed, "invalid_request_error", "method_not_allowed", "use POST")
		return
	}
	var body bytes.Buffer
	if _, err := body.ReadFrom(http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes)); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeEmbedError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "request_too_large", fmt.Sprintf("request body is over %d bytes", h.cfg.MaxBodyBytes))
			return
		}
		writeEmbedError(w, http.StatusBadRequest, "invalid_request_error", "", "cannot read the request body: "+err.Error())
		return
	}
	req, err := DecodeEmbedRequest(body.Bytes())
	if err != nil {
		writeEmbedError(w, http.StatusBadRequest, "invalid_request_error", "", err.Error())
		return
	}
	switch {
	case req.Model != h.cfg.Model:
		writeEmbedError(w, http.StatusNotFound, "invalid_request_error", "model_not_found",
			fmt.Sprintf("the model %q does not exist: this server embeds with %q", req.Model, h.cfg.Model))
		return
	case len(req.Input) > h.cfg.MaxInputs:
		writeEmbedError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "too_many_inputs",
			fmt.Sprintf("%d inputs, at most %d per request", len(req.Input), h.cfg.MaxInputs))
		return
	}
	resp, err := h.embed(req)
	if err != nil {
		writeEmbedError(w, http.StatusInternalServerError, "server_error", "", err.Error())
		return
	}
	WriteJSON(w, http.StatusOK, resp)
}

// embed builds the answer to req: float vectors, or their base64 bytes.
func (h *EmbedHandler) embed(req EmbeddingsRequest) (any, error) {
	floats := EmbeddingsResponse{Object: "list", Model: h.cfg.Model, Data: make([]Embedding, len(req.Input))}
	for i, text := range req.Input {
		v := h.cfg.Embed(text)
		if err := checkVector(v, floats.Data); err != nil {
			return nil, fmt.Errorf("embedding input %d: %w", i, err)
		}
		floats.Data[i] = Embedding{Object: "embedding", Index: i, Embedding: v}
		floats.Usage.PromptTokens += len(strings.Fields(text))
	}
	floats.Usage.TotalTokens = floats.Usage.PromptTokens
	if req.EncodingFormat != "base64" {
		return floats, nil
	}
	type b64Embedding struct {
		Object    string `json:"object"`
		Index     int    `json:"index"`
		Embedding string `json:"embedding"`
	}
	out := struct {
		Object string         `json:"object"`
		Model  string         `json:"model"`
		Data   []b64Embedding `json:"data"`
		Usage  Usage          `json:"usage"`
	}{floats.Object, floats.Model, make([]b64Embedding, len(floats.Data)), floats.Usage}
	for i, d := range floats.Data {
		b := make([]byte, 0, 4*len(d.Embedding))
		for _, x := range d.Embedding {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
		out.Data[i] = b64Embedding{Object: d.Object, Index: d.Index, Embedding: base64.StdEncoding.EncodeToString(b)}
	}
	return out, nil
}

// checkVector rejects an empty or non-finite vector, or one whose length
// differs from the first's.
func checkVector(v []float32, done []Embedding) error {
	if len(v) == 0 {
		return errors.New("the embedding function returned an empty vector")
	}
	if len(done) > 0 && done[0].Embedding != nil && len(done[0].Embedding) != len(v) {
		return fmt.Errorf("the embedding function returned vectors of lengths %d and %d", len(done[0].Embedding), len(v))
	}
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return errors.New("the embedding function returned a non-finite value")
		}
	}
	return nil
}

// DecodeEmbedRequest parses the body of POST /v1/embeddings: input is a
// string or an array of strings (token-id inputs are refused), and
// encoding_format is empty, "float" or "base64". Its errors say what is
// wrong, for a 400 answer.
func DecodeEmbedRequest(b []byte) (EmbeddingsRequest, error) {
	var raw struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
		Dimensions     *int            `json:"dimensions"`
		User           string          `json:"user"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return EmbeddingsRequest{}, fmt.Errorf("the body is not an embeddings request: %v", err)
	}
	req := EmbeddingsRequest{Model: raw.Model, EncodingFormat: raw.EncodingFormat}
	var errs []error
	if raw.Model == "" {
		errs = append(errs, errors.New("model is missing"))
	}
	switch raw.EncodingFormat {
	case "", "float", "base64":
	default:
		errs = append(errs, fmt.Errorf("encoding_format %q: want float or base64", raw.EncodingFormat))
	}
	if raw.Dimensions != nil {
		errs = append(errs, errors.New("dimensions is not supported: the model's vectors have a fixed length"))
	}
	in, err := decodeEmbedInput(raw.Input)
	if err != nil {
		errs = append(errs, err)
	}
	req.Input = in
	return req, errors.Join(errs...)
}

func decodeEmbedInput(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, errors.New("input is missing")
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, errors.New("input must be a string or an array of strings (token-id inputs are not supported)")
	}
	if len(many) == 0 {
		return nil, errors.New("input is an empty array")
	}
	return many, nil
}

// writeEmbedError writes an OpenAI error object.
func writeEmbedError(w http.ResponseWriter, status int, typ, code, msg string) {
	WriteAPIError(w, status, NewAPIError(typ, code, "", msg))
}
