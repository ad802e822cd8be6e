package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rspo-dev/rspo/prm"
)

// EmbeddingsFeaturizerName is the name the LLM-feature featurizer is
// registered under with prm.RegisterFeaturizer, so a PRM snapshot that
// uses it rebuilds it on load in any binary that links this package.
const EmbeddingsFeaturizerName = "embeddings"

func init() { prm.RegisterFeaturizer(EmbeddingsFeaturizerName, embeddingsFromSpec) }

// EmbedURLEnv names the environment variable that, when set, replaces the
// server URL of every embeddings featurizer rebuilt from a snapshot: a PRM
// trained against one address (say http://localhost:8000/v1) can be loaded
// where the same model is served at another. The model name and dimension
// still come from the snapshot and are checked against every answer.
const EmbedURLEnv = "RSPO_PRM_EMBED_URL"

// embeddingsFromSpec is the registered factory: the spec's params, with
// the URL replaced by $RSPO_PRM_EMBED_URL when that is set. Unknown
// fields are an error, so a snapshot never holds settings this build
// would ignore.
func embeddingsFromSpec(params json.RawMessage) (prm.Featurizer, error) {
	var cfg EmbeddingsFeaturizerConfig
	dec := json.NewDecoder(strings.NewReader(string(params)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return nil, fmt.Errorf("%w: embeddings params: %v", prm.ErrInvalidConfig, err)
	}
	if u := os.Getenv(EmbedURLEnv); u != "" {
		cfg.URL = u
	}
	return NewEmbeddingsFeaturizer(cfg)
}

// DefaultStepTemplate is how a step is rendered for the embedding model
// unless EmbeddingsFeaturizerConfig.Template says otherwise.
const DefaultStepTemplate = "Task: {instruction}\nObservation: {observation}\nAction: {action}"

// The placeholders of a step template.
const (
	placeInstruction = "{instruction}"
	placeObservation = "{observation}"
	placeAction      = "{action}"
)

// MaxEmbedBatch bounds EmbeddingsFeaturizerConfig.MaxBatch and the inputs
// EmbedHandler accepts by default in one request.
const MaxEmbedBatch = 2048

// embedParallel is how many requests one FeaturesBatch call has in flight
// at once (the endpoint's MaxConcurrent bounds all calls together).
const embedParallel = 4

// EmbeddingsFeaturizerConfig configures EmbeddingsFeaturizer. Every field
// but Endpoint is recorded in a PRM snapshot's featurizer spec, with its
// defaults filled in; the API key never is (it comes from the
// environment, see APIKeyEnv).
type EmbeddingsFeaturizerConfig struct {
	// URL is the server's base URL including the API prefix, e.g.
	// http://localhost:8000/v1. Required.
	URL string `json:"url"`
	// Model is the embedding model's name as the server knows it. Required.
	Model string `json:"model"`
	// Dim is the embedding's length; every answer is checked against it,
	// and the PRM head is shaped by it. Required (Endpoint.EmbeddingDim
	// asks a server).
	Dim int `json:"dim"`
	// Template renders a step as text: {instruction}, {observation} and
	// {action} (each required) are replaced by the step's fields. Default
	// DefaultStepTemplate.
	Template string `json:"template,omitempty"`
	// CacheSize bounds the cached feature vectors (an LRU keyed by a hash
	// of the rendered text; CacheSize×Dim×4 bytes at most). Default 16384;
	// −1 caches nothing.
	CacheSize int `json:"cache_size,omitempty"`
	// MaxBatch bounds the inputs of one request, 1..MaxEmbedBatch.
	// Default 256.
	MaxBatch int `json:"max_batch,omitempty"`
	// Endpoint holds the connection's other settings (timeouts, retries,
	// concurrency, HTTP client, API key); its URL is ignored. Default:
	// EndpointConfig's defaults. Not recorded in a snapshot.
	Endpoint EndpointConfig `json:"-"`
}

func (c EmbeddingsFeaturizerConfig) withDefaults() EmbeddingsFeaturizerConfig {
	if c.Template == "" {
		c.Template = DefaultStepTemplate
	}
	if c.CacheSize == 0 {
		c.CacheSize = 16384
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = 256
	}
	return c
}

// Validate reports every problem with the (defaulted) configuration.
func (c EmbeddingsFeaturizerConfig) Validate() error {
	var errs []error
	bad := func(field, reason string) { errs = append(errs, &prm.ConfigError{Field: field, Reason: reason}) }
	if c.URL == "" {
		bad("URL", "empty: give the embedding server's base URL, e.g. http://localhost:8000/v1")
	}
	if c.Model == "" {
		bad("Model", "empty: give the embedding model's name as the server serves it")
	}
	if c.Dim < 1 || c.Dim > prm.MaxFeatureDim {
		bad("Dim", fmt.Sprintf("%d not in 1..%d (the embedding's length)", c.Dim, prm.MaxFeatureDim))
	}
	for _, p := range []string{placeInstruction, placeObservation, placeAction} {
		if !strings.Contains(c.Template, p) {
			bad("Template", fmt.Sprintf("%q lacks %s", c.Template, p))
		}
	}
	if c.CacheSize < -1 {
		bad("CacheSize", fmt.Sprintf("%d: want ≥ 1, or −1 for no cache (0: the default 16384)", c.CacheSize))
	}
	if c.MaxBatch < 1 || c.MaxBatch > MaxEmbedBatch {
		bad("MaxBatch", fmt.Sprintf("%d not in 1..%d", c.MaxBatch, MaxEmbedBatch))
	}
	return errors.Join(errs...)
}

// EmbeddingsFeaturizer is the PRM's LLM-feature featurizer (the paper's
// frozen LLM features h_t, eq. 5): a step is rendered as text with the
// template and embedded by a model behind an OpenAI-compatible
// /v1/embeddings endpoint; h_t is that embedding scaled to unit L2 norm
// (the PRM head's initialisation assumes unit-norm features, as the hash
// projection's nearly are; a zero vector stays zero). The features are
// frozen: the server's model is never trained.
//
// Features are cached by a 128-bit hash of the rendered text: the actions
// of one state and the states that recur across trajectories are embedded
// once. A FeaturesBatch call looks every step up, then embeds the distinct
// missing texts MaxBatch per request, a few requests at a time. Calls
// that miss the same text at the same moment each embed it; the answers
// are the same.
//
// It is a prm.BatchFeaturizer: the PRM's paths featurize whole chunks of
// steps and surface its errors. Its Features, which cannot return one,
// fills dst with NaN on failure (and counts the failure in Stats).
type EmbeddingsFeaturizer struct {
	cfg   EmbeddingsFeaturizerConfig
	ep    *Endpoint
	tmpl  []stepTemplatePart
	seeds [2]maphash.Seed
	cache *featureCache // nil: CacheSize −1

	lookups, hits, embedded, requests, failures atomic.Uint64
}

var (
	_ prm.BatchFeaturizer = (*EmbeddingsFeaturizer)(nil)
	_ prm.SpecFeaturizer  = (*EmbeddingsFeaturizer)(nil)
)

// NewEmbeddingsFeaturizer returns the featurizer for cfg; zero fields take
// their defaults. It does not contact the server. An invalid config
// returns an error wrapping prm.ErrInvalidConfig.
func NewEmbeddingsFeaturizer(cfg EmbeddingsFeaturizerConfig) (*EmbeddingsFeaturizer, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	epc := cfg.Endpoint
	epc.URL = cfg.URL
	ep, err := NewEndpoint(epc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", prm.ErrInvalidConfig, err)
	}
	f := &EmbeddingsFeaturizer{cfg: cfg, ep: ep, tmpl: parseStepTemplate(cfg.Template),
		seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
	if cfg.CacheSize > 0 {
		f.cache = newFeatureCache(cfg.CacheSize)
	}
	return f, nil
}

// Config returns the configuration with defaults filled in.
func (f *EmbeddingsFeaturizer) Config() EmbeddingsFeaturizerConfig { return f.cfg }

// Dim implements prm.Featurizer.
func (f *EmbeddingsFeaturizer) Dim() int { return f.cfg.Dim }

// Spec implements prm.SpecFeaturizer: the configuration without the
// connection settings (no API key).
func (f *EmbeddingsFeaturizer) Spec() prm.FeaturizerSpec {
	params, _ := json.Marshal(f.cfg) // strings and ints cannot fail
	return prm.FeaturizerSpec{Name: EmbeddingsFeaturizerName, Params: params}
}

// Render returns the text the model embeds for a step.
func (f *EmbeddingsFeaturizer) Render(s prm.StepText) string {
	var b strings.Builder
	b.Grow(len(f.cfg.Template) + len(s.Instruction) + len(s.Observation) + len(s.Action))
	for _, p := range f.tmpl {
		b.WriteString(p.literal)
		switch p.field {
		case tmplInstruction:
			b.WriteString(s.Instruction)
		case tmplObservation:
			b.WriteString(s.Observation)
		case tmplAction:
			b.WriteString(s.Action)
		}
	}
	return b.String()
}

// Features implements prm.Featurizer. It embeds the one step (unless it is
// cached); on failure it fills dst with NaN.
func (f *EmbeddingsFeaturizer) Features(instruction, observation, action string, dst []float32) {
	err := f.FeaturesBatch(context.Background(), []prm.StepText{{Instruction: instruction, Observation: observation, Action: action}}, dst[:f.cfg.Dim])
	if err != nil {
		nan := float32(math.NaN())
		for i := range dst[:f.cfg.Dim] {
			dst[i] = nan
		}
	}
}

// pendingText is a distinct text to embed and the rows of the batch it fills.
type pendingText struct {
	text string
	key  featureKey
	rows []int
}

// FeaturesBatch implements prm.BatchFeaturizer. Its errors are the
// endpoint's (a *StatusError, a transport error after the retries, ctx's
// error) or a malformed answer: the wrong number of vectors, or vectors
// whose length is not Dim.
func (f *EmbeddingsFeaturizer) FeaturesBatch(ctx context.Context, steps []prm.StepText, dst []float32) error {
	d := f.cfg.Dim
	if len(dst) < len(steps)*d {
		return fmt.Errorf("llm: embeddings featurizer: dst has %d entries, %d steps need %d", len(dst), len(steps), len(steps)*d)
	}
	var todo []pendingText
	index := map[featureKey]int{}
	f.lookups.Add(uint64(len(steps)))
	for i, s := range steps {
		text := f.Render(s)
		k := f.key(text)
		if j, ok := index[k]; ok {
			f.hits.Add(1)
			todo[j].rows = append(todo[j].rows, i)
			continue
		}
		if f.cache != nil {
			if v, ok := f.cache.get(k); ok {
				f.hits.Add(1)
				copy(dst[i*d:(i+1)*d], v)
				continue
			}
		}
		index[k] = len(todo)
		todo = append(todo, pendingText{text: text, key: k, rows: []int{i}})
	}
	return f.embedAll(ctx, todo, dst)
}

// embedAll embeds todo MaxBatch texts per request, embedParallel requests
// at a time, writing each vector to its rows of dst and to the cache. It
// returns the first failure; the requests still waiting are then skipped.
func (f *EmbeddingsFeaturizer) embedAll(ctx context.Context, todo []pendingText, dst []float32) error {
	if len(todo) <= f.cfg.MaxBatch {
		return f.embedChunk(ctx, todo, dst)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	sem := make(chan struct{}, embedParallel)
	for lo := 0; lo < len(todo); lo += f.cfg.MaxBatch {
		chunk := todo[lo:min(len(todo), lo+f.cfg.MaxBatch)]
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := f.embedChunk(ctx, chunk, dst); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
				cancel()
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// embedChunk makes one request for chunk.
func (f *EmbeddingsFeaturizer) embedChunk(ctx context.Context, chunk []pendingText, dst []float32) error {
	if len(chunk) == 0 {
		return nil
	}
	texts := make([]string, len(chunk))
	for i, p := range chunk {
		texts[i] = p.text
	}
	f.requests.Add(1)
	f.embedded.Add(uint64(len(texts)))
	vecs, err := f.ep.Embed(ctx, f.cfg.Model, texts)
	if err == nil && len(vecs) > 0 && len(vecs[0]) != f.cfg.Dim {
		err = fmt.Errorf("llm: embedding model %q answered %d-dimensional vectors, the featurizer's dim is %d", f.cfg.Model, len(vecs[0]), f.cfg.Dim)
	}
	if err != nil {
		f.failures.Add(1)
		return fmt.Errorf("llm: embeddings featurizer: %w", err)
	}
	d := f.cfg.Dim
	for i, p := range chunk {
		v := vecs[i]
		unitNorm(v)
		if f.cache != nil {
			f.cache.put(p.key, v)
		}
		for _, r := range p.rows {
			copy(dst[r*d:(r+1)*d], v)
		}
	}
	return nil
}

// unitNorm scales v to unit L2 norm in place; a zero vector stays zero.
func unitNorm(v []float32) {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		return
	}
	s := float32(1 / math.Sqrt(ss))
	for i := range v {
		v[i] *= s
	}
}

func (f *EmbeddingsFeaturizer) key(text string) featureKey {
	return featureKey{maphash.String(f.seeds[0], text), maphash.String(f.seeds[1], text)}
}

// EmbeddingsStats counts an EmbeddingsFeaturizer's work since it was built.
type EmbeddingsStats struct {
	// Lookups counts steps asked for; Hits those served without embedding
	// them: from the cache, or as a repeat of a text in the same call.
	Lookups, Hits uint64
	// Embedded counts texts sent to the server, in Requests requests, of
	// which Failures failed (after the endpoint's retries).
	Embedded, Requests, Failures uint64
	// Cached is how many vectors the cache holds now.
	Cached int
}

// HitRate is Hits/Lookups (0 before any lookup).
func (s EmbeddingsStats) HitRate() float64 {
	if s.Lookups == 0 {
		return 0
	}
	return float64(s.Hits) / float64(s.Lookups)
}

// Stats returns the featurizer's counters.
func (f *EmbeddingsFeaturizer) Stats() EmbeddingsStats {
	s := EmbeddingsStats{Lookups: f.lookups.Load(), Hits: f.hits.Load(), Embedded: f.embedded.Load(),
		Requests: f.requests.Load(), Failures: f.failures.Load()}
	if f.cache != nil {
		s.Cached = f.cache.len()
	}
	return s
}

// A template is literal text, each piece followed by a step field.
type stepTemplatePart struct {
	literal string
	field   int
}

const (
	tmplLiteral = iota
	tmplInstruction
	tmplObservation
	tmplAction
)

// parseStepTemplate cuts t at its placeholders.
func parseStepTemplate(t string) []stepTemplatePart {
	places := []struct {
		s     string
		field int
	}{{placeInstruction, tmplInstruction}, {placeObservation, tmplObservation}, {placeAction, tmplAction}}
	var parts []stepTemplatePart
	for {
		at, which := -1, 0
		for i, p := range places {
			if j := strings.Index(t, p.s); j >= 0 && (at < 0 || j < at) {
				at, which = j, i
			}
		}
		if at < 0 {
			return append(parts, stepTemplatePart{literal: t, field: tmplLiteral})
		}
		parts = append(parts, stepTemplatePart{literal: t[:at], field: places[which].field})
		t = t[at+len(places[which].s):]
	}
}
