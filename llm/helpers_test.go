package llm

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/rspo-dev/rspo/prm"
)

const testEmbedModel = "hash-embed"

// hashEmbed embeds a whole text with the hash projection (as the
// observation field), the deterministic stand-in for an embedding model.
func hashEmbed(t testing.TB, dim int) func(string) []float32 {
	embed, err := HashEmbedding(prm.HashProjectionConfig{Dim: dim, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	return embed
}

// embedServer serves hashEmbed over HTTP; fail makes it answer 503, and
// requests and inputs count the embeddings requests it was sent and the
// texts it embedded.
type embedServer struct {
	*httptest.Server
	fail     atomic.Bool
	requests atomic.Int64
	inputs   atomic.Int64
}

func newEmbedServer(t testing.TB, dim int) *embedServer {
	t.Helper()
	s := &embedServer{}
	embed := hashEmbed(t, dim)
	h, err := NewEmbedHandler(EmbedHandlerConfig{Model: testEmbedModel, Embed: func(text string) []float32 {
		s.inputs.Add(1)
		return embed(text)
	}})
	if err != nil {
		t.Fatal(err)
	}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			s.requests.Add(1)
		}
		if s.fail.Load() {
			writeEmbedError(w, http.StatusServiceUnavailable, "server_error", "", "model is loading")
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// newTestFeaturizer returns an embeddings featurizer of srv with no
// retries (so a failure shows at once).
func newTestFeaturizer(t testing.TB, srv *embedServer, dim int, mod func(*EmbeddingsFeaturizerConfig)) *EmbeddingsFeaturizer {
	t.Helper()
	cfg := EmbeddingsFeaturizerConfig{URL: srv.URL + "/v1", Model: testEmbedModel, Dim: dim,
		Endpoint: EndpointConfig{Retries: -1}}
	if mod != nil {
		mod(&cfg)
	}
	f, err := NewEmbeddingsFeaturizer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// inProcess is the featurizer the HTTP one must equal: the same rendering,
// embedding and normalisation, without the server.
type inProcess struct {
	render func(prm.StepText) string
	embed  func(string) []float32
	dim    int
}

func (f inProcess) Dim() int { return f.dim }

func (f inProcess) Features(instruction, observation, action string, dst []float32) {
	v := f.embed(f.render(prm.StepText{Instruction: instruction, Observation: observation, Action: action}))
	unitNorm(v)
	copy(dst, v)
}
