package llm

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/prm/featurizertest"
)

func TestEmbeddingsConfigValidate(t *testing.T) {
	_, err := NewEmbeddingsFeaturizer(EmbeddingsFeaturizerConfig{Template: "{action} only", CacheSize: -2, MaxBatch: MaxEmbedBatch + 1})
	if !errors.Is(err, prm.ErrInvalidConfig) {
		t.Fatalf("got %v, want an error wrapping prm.ErrInvalidConfig", err)
	}
	for _, field := range []string{"URL", "Model", "Dim", "{instruction}", "{observation}", "CacheSize", "MaxBatch"} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("the error does not name %s:\n%v", field, err)
		}
	}
	if _, err := NewEmbeddingsFeaturizer(EmbeddingsFeaturizerConfig{URL: "localhost:8000", Model: "m", Dim: 8}); err == nil {
		t.Error("a URL without a scheme was accepted")
	}
}

func TestEmbeddingsDefaultsAndRender(t *testing.T) {
	f, err := NewEmbeddingsFeaturizer(EmbeddingsFeaturizerConfig{URL: "http://localhost:8000/v1", Model: "m", Dim: 8})
	if err != nil {
		t.Fatal(err)
	}
	cfg := f.Config()
	if cfg.Template != DefaultStepTemplate || cfg.CacheSize != 16384 || cfg.MaxBatch != 256 {
		t.Errorf("defaults: got template %q, cache %d, batch %d", cfg.Template, cfg.CacheSize, cfg.MaxBatch)
	}
	got := f.Render(prm.StepText{Instruction: "put a mug in the sink", Observation: "You see a mug 1.", Action: "take mug 1"})
	want := "Task: put a mug in the sink\nObservation: You see a mug 1.\nAction: take mug 1"
	if got != want {
		t.Errorf("render: got %q, want %q", got, want)
	}
	g, err := NewEmbeddingsFeaturizer(EmbeddingsFeaturizerConfig{URL: "http://h/v1", Model: "m", Dim: 8,
		Template: "<{action}|{observation}|{instruction}|{action}>"})
	if err != nil {
		t.Fatal(err)
	}
	// Placeholders inside a field are the field's text, not placeholders.
	if got, want := g.Render(prm.StepText{Instruction: "i", Observation: "{action}", Action: "a"}), "<a|{action}|i|a>"; got != want {
		t.Errorf("render: got %q, want %q", got, want)
	}
}

func TestEmbeddingsFeaturesAreUnitServerVectors(t *testing.T) {
	srv := newEmbedServer(t, 64)
	f := newTestFeaturizer(t, srv, 64, nil)
	steps := []prm.StepText{{Instruction: "task a", Observation: "obs 1", Action: "go left"}, {Instruction: "task a", Observation: "obs 1", Action: "go right"}, {Instruction: "task a", Observation: "obs 1", Action: "go left"}}
	got := make([]float32, 3*64)
	if err := f.FeaturesBatch(context.Background(), steps, got); err != nil {
		t.Fatal(err)
	}
	ref := inProcess{render: f.Render, embed: hashEmbed(t, 64), dim: 64}
	want := make([]float32, 64)
	for i, s := range steps {
		ref.Features(s.Instruction, s.Observation, s.Action, want)
		row := got[i*64 : (i+1)*64]
		var norm float64
		for j := range row {
			if row[j] != want[j] {
				t.Fatalf("step %d entry %d: got %v, want %v", i, j, row[j], want[j])
			}
			norm += float64(row[j]) * float64(row[j])
		}
		if math.Abs(norm-1) > 1e-5 {
			t.Errorf("step %d: squared norm %v, want 1", i, norm)
		}
	}
	if n := srv.inputs.Load(); n != 2 {
		t.Errorf("the server embedded %d texts, want 2 (the repeated step once)", n)
	}
	st := f.Stats()
	if st.Lookups != 3 || st.Hits != 1 || st.Requests != 1 || st.Embedded != 2 || st.Cached != 2 {
		t.Errorf("stats: got %+v, want 3 lookups, 1 hit, 1 request of 2 texts, 2 cached", st)
	}
	if err := f.FeaturesBatch(context.Background(), steps[:2], got[:128]); err != nil {
		t.Fatal(err)
	}
	if n := srv.requests.Load(); n != 1 {
		t.Errorf("cached steps made %d requests, want 1", n)
	}
}

func TestEmbeddingsBatchesRequests(t *testing.T) {
	srv := newEmbedServer(t, 16)
	f := newTestFeaturizer(t, srv, 16, func(c *EmbeddingsFeaturizerConfig) { c.MaxBatch = 10; c.CacheSize = -1 })
	steps := make([]prm.StepText, 95)
	for i := range steps {
		steps[i] = prm.StepText{Instruction: "t", Observation: "o", Action: strings.Repeat("x", i+1)}
	}
	if err := f.FeaturesBatch(context.Background(), steps, make([]float32, 95*16)); err != nil {
		t.Fatal(err)
	}
	if got := srv.requests.Load(); got != 10 {
		t.Errorf("95 texts, at most 10 a request: got %d requests, want 10", got)
	}
	if st := f.Stats(); st.Cached != 0 || st.Hits != 0 {
		t.Errorf("with no cache: got %+v", st)
	}
}

func TestEmbeddingsDimensionMismatch(t *testing.T) {
	srv := newEmbedServer(t, 32)
	f := newTestFeaturizer(t, srv, 64, nil)
	err := f.FeaturesBatch(context.Background(), []prm.StepText{{Instruction: "a", Observation: "b", Action: "c"}}, make([]float32, 64))
	if err == nil || !strings.Contains(err.Error(), "32-dimensional") {
		t.Fatalf("got %v, want an error naming the server's 32 dimensions", err)
	}
}

func TestEmbeddingDim(t *testing.T) {
	srv := newEmbedServer(t, 48)
	ep, err := NewEndpoint(EndpointConfig{URL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := ep.EmbeddingDim(context.Background(), testEmbedModel); err != nil || d != 48 {
		t.Errorf("got %d, %v; want 48", d, err)
	}
	var se *StatusError
	if _, err := ep.EmbeddingDim(context.Background(), "other"); !errors.As(err, &se) || se.Code != 404 {
		t.Errorf("another model: got %v, want a 404 StatusError", err)
	}
}

// A failing server surfaces on every PRM path: as an error where the API
// returns one, as NaN (never a plausible score) where it cannot.
func TestEmbeddingsFailureSurfaces(t *testing.T) {
	srv := newEmbedServer(t, 16)
	f := newTestFeaturizer(t, srv, 16, nil)
	m, err := prm.New(f, prm.ModelConfig{Hidden: 4})
	if err != nil {
		t.Fatal(err)
	}
	trajs := householdTrajectories(t)[:8]
	srv.fail.Store(true)
	ctx := context.Background()

	if _, err := m.ScoreBatchContext(ctx, trajs); !errors.Is(err, prm.ErrFeaturizer) || !strings.Contains(err.Error(), "503") {
		t.Errorf("ScoreBatchContext: got %v, want ErrFeaturizer with the 503", err)
	}
	if _, err := prm.EvaluateContext(ctx, m, trajs); !errors.Is(err, prm.ErrFeaturizer) {
		t.Errorf("EvaluateContext: got %v, want ErrFeaturizer", err)
	}
	_, _, err = prm.Train(ctx, householdTrajectories(t), prm.TrainConfig{Featurizer: f, MaxEpochs: 2})
	var se *StatusError
	if !errors.Is(err, prm.ErrFeaturizer) || !errors.As(err, &se) || se.Code != 503 {
		t.Errorf("Train: got %v, want ErrFeaturizer wrapping the 503 StatusError", err)
	}
	s := trajs[0].Steps[0]
	if err := m.ScoreActionsContext(ctx, trajs[0].Instruction, s.Observation, s.Admissible, make([]float64, len(s.Admissible))); !errors.Is(err, prm.ErrFeaturizer) {
		t.Errorf("ScoreActionsContext: got %v, want ErrFeaturizer", err)
	}
	for i, r := range m.ScoreBatch(trajs)[0] {
		if !math.IsNaN(r) {
			t.Fatalf("ScoreBatch step %d: got %v, want NaN", i, r)
		}
	}
	dst := make([]float64, len(s.Admissible))
	m.ScoreActions(trajs[0].Instruction, s.Observation, s.Admissible, dst)
	if !math.IsNaN(dst[0]) {
		t.Errorf("ScoreActions: got %v, want NaN", dst[0])
	}
	x := make([]float32, 16)
	f.Features("a", "b", "c", x)
	if !math.IsNaN(float64(x[0])) {
		t.Errorf("Features: got %v, want NaN", x[0])
	}

	ts := prm.NewTiltScorer(ctx, m)
	before := srv.requests.Load()
	for range 3 {
		ts.ScoreActions(trajs[0].Instruction, s.Observation, s.Admissible, dst)
	}
	if err := ts.Err(); !errors.Is(err, prm.ErrFeaturizer) || !strings.Contains(err.Error(), "3 tilted states") {
		t.Errorf("TiltScorer.Err: got %v, want ErrFeaturizer counting 3 states", err)
	}
	if n := srv.requests.Load() - before; n != 1 {
		t.Errorf("the tilt scorer asked %d times after failing, want 1 (it stops at the first failure)", n)
	}
	if st := f.Stats(); st.Failures == 0 {
		t.Errorf("stats count no failure: %+v", st)
	}

	srv.fail.Store(false)
	ok := prm.NewTiltScorer(ctx, m)
	ok.ScoreActions(trajs[0].Instruction, s.Observation, s.Admissible, dst)
	if err := ok.Err(); err != nil || math.IsNaN(dst[0]) {
		t.Errorf("a healthy server: got %v, score %v", err, dst[0])
	}
}

// A PRM trained through the HTTP featurizer is the PRM trained on the same
// features in process: the features are bit-identical, so is everything
// after them.
func TestTrainThroughHTTPMatchesInProcess(t *testing.T) {
	const dim = 128
	trajs := householdTrajectories(t)
	srv := newEmbedServer(t, dim)
	f := newTestFeaturizer(t, srv, dim, nil)
	ref := inProcess{render: f.Render, embed: hashEmbed(t, dim), dim: dim}
	cfg := prm.TrainConfig{MaxEpochs: 60, Seed: 4}
	ctx := context.Background()

	cfg.Featurizer = f
	mHTTP, repHTTP, err := prm.Train(ctx, trajs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Featurizer = ref
	mRef, repRef, err := prm.Train(ctx, trajs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if repHTTP.HeldoutEval != repRef.HeldoutEval || repHTTP.BestEpoch != repRef.BestEpoch {
		t.Errorf("held-out evaluation through HTTP %+v (best epoch %d), in process %+v (best epoch %d)",
			repHTTP.HeldoutEval, repHTTP.BestEpoch, repRef.HeldoutEval, repRef.BestEpoch)
	}
	t.Logf("held-out AUC %.3f on %d household trajectories (%d unique steps)", repHTTP.HeldoutEval.AUC, len(trajs), repHTTP.UniqueSteps)
	evHTTP, err := prm.EvaluateContext(ctx, mHTTP, trajs)
	if err != nil {
		t.Fatal(err)
	}
	if evRef := prm.Evaluate(mRef, trajs); evHTTP != evRef {
		t.Errorf("evaluation through HTTP %+v, in process %+v", evHTTP, evRef)
	}
	if got, want := mHTTP.ScoreBatch(trajs[:3]), mRef.ScoreBatch(trajs[:3]); !equalScores(got, want) {
		t.Errorf("ScoreBatch through HTTP %v, in process %v", got, want)
	}
}

func equalScores(a, b [][]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}

func TestEmbeddingsSnapshotRoundTrip(t *testing.T) {
	t.Setenv("RSPO_OPENAI_API_KEY", "sk-secret-test-key")
	srv := newEmbedServer(t, 32)
	f := newTestFeaturizer(t, srv, 32, func(c *EmbeddingsFeaturizerConfig) {
		c.Template = "{instruction} | {observation} | {action}"
		c.CacheSize = 100
		c.MaxBatch = 64
	})
	trajs := householdTrajectories(t)
	m, _, err := prm.Train(context.Background(), trajs, prm.TrainConfig{Featurizer: f, MaxEpochs: 5})
	if err != nil {
		t.Fatal(err)
	}
	b, err := prm.EncodeSnapshot(m)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "sk-secret") {
		t.Error("the snapshot holds the API key")
	}
	back, err := prm.DecodeSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	g, ok := back.Featurizer().(*EmbeddingsFeaturizer)
	if !ok {
		t.Fatalf("the loaded featurizer is a %T", back.Featurizer())
	}
	if got, want := g.Spec(), f.Spec(); got.Name != want.Name || string(got.Params) != string(want.Params) {
		t.Errorf("spec: got %s %s, want %s %s", got.Name, got.Params, want.Name, want.Params)
	}
	var params map[string]any
	if err := json.Unmarshal(g.Spec().Params, &params); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"url", "model", "dim", "template", "cache_size", "max_batch"} {
		if _, ok := params[k]; !ok {
			t.Errorf("the spec lacks %s: %s", k, g.Spec().Params)
		}
	}
	got, err := back.ScoreBatchContext(context.Background(), trajs[:5])
	if err != nil {
		t.Fatal(err)
	}
	if want := m.ScoreBatch(trajs[:5]); !equalScores(got, want) {
		t.Errorf("the loaded model scores %v, the trained one %v", got, want)
	}
}

func TestEmbeddingsSpecRejectsUnknownParams(t *testing.T) {
	_, err := prm.NewFeaturizer(prm.FeaturizerSpec{Name: EmbeddingsFeaturizerName,
		Params: json.RawMessage(`{"url":"http://h/v1","model":"m","dim":8,"api_key":"x"}`)})
	if !errors.Is(err, prm.ErrInvalidConfig) {
		t.Errorf("got %v, want ErrInvalidConfig for an unknown field", err)
	}
}

// The cache hit rate of featurizing recorded household trajectories the
// two ways the PRM is used: training (every step, once) and tilted
// rollouts (every admissible action of every state).
func TestHouseholdCacheHitRate(t *testing.T) {
	trajs := householdTrajectories(t)
	srv := newEmbedServer(t, 32)
	f := newTestFeaturizer(t, srv, 32, nil)
	m, err := prm.New(f, prm.ModelConfig{Hidden: 4})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := m.ScoreBatchContext(ctx, trajs); err != nil {
		t.Fatal(err)
	}
	scoring := f.Stats()
	ts := prm.NewTiltScorer(ctx, m)
	var dst []float64
	for _, tr := range trajs {
		for _, s := range tr.Steps {
			dst = append(dst[:0], make([]float64, len(s.Admissible))...)
			ts.ScoreActions(tr.Instruction, s.Observation, s.Admissible, dst)
		}
	}
	if err := ts.Err(); err != nil {
		t.Fatal(err)
	}
	all := f.Stats()
	tilt := EmbeddingsStats{Lookups: all.Lookups - scoring.Lookups, Hits: all.Hits - scoring.Hits}
	t.Logf("scoring every step: %d lookups, hit rate %.3f; then tilting every state: %d lookups, hit rate %.3f, %d requests",
		scoring.Lookups, scoring.HitRate(), tilt.Lookups, tilt.HitRate(), all.Requests-scoring.Requests)
	if scoring.HitRate() <= 0 {
		t.Errorf("no step repeats in %d household steps: hit rate %v", scoring.Lookups, scoring.HitRate())
	}
	if tilt.HitRate() <= scoring.HitRate() {
		t.Errorf("tilting (whose taken actions were scored already) hits %v, less than scoring %v", tilt.HitRate(), scoring.HitRate())
	}
}

func TestFeatureCacheBoundedLRU(t *testing.T) {
	c := newFeatureCache(3)
	if len(c.shards) != 3 {
		t.Fatalf("got %d shards for capacity 3", len(c.shards))
	}
	one := newFeatureCache(1)
	for i := range uint64(5) {
		one.put(featureKey{i, i}, []float32{float32(i)})
	}
	if one.len() != 1 {
		t.Errorf("capacity 1 holds %d", one.len())
	}
	if v, ok := one.get(featureKey{4, 4}); !ok || v[0] != 4 {
		t.Errorf("the last put is gone: %v %v", v, ok)
	}
	big := newFeatureCache(100)
	for i := range uint64(1000) {
		big.put(featureKey{i, 0}, []float32{float32(i)})
		if n := big.len(); n > 100 {
			t.Fatalf("after %d puts the cache holds %d > 100", i+1, n)
		}
	}
	if big.len() != 100 {
		t.Errorf("a full cache holds %d, want 100", big.len())
	}
	// LRU: in a one-shard cache, reading the oldest keeps it past an eviction.
	lru := newFeatureCache(1)
	lru.shards = lru.shards[:1]
	lru.shards[0].cap = 2
	lru.put(featureKey{1}, []float32{1})
	lru.put(featureKey{2}, []float32{2})
	lru.get(featureKey{1})
	lru.put(featureKey{3}, []float32{3})
	if _, ok := lru.get(featureKey{1}); !ok {
		t.Error("the recently read entry was evicted")
	}
	if _, ok := lru.get(featureKey{2}); ok {
		t.Error("the least recently used entry was kept")
	}
	if newFeatureCache(0) != nil {
		t.Error("capacity 0 built a cache")
	}
}

func TestEmbeddingsConformance(t *testing.T) {
	srv := newEmbedServer(t, 64)
	featurizertest.Run(t, newTestFeaturizer(t, srv, 64, nil))
	featurizertest.Run(t, newTestFeaturizer(t, srv, 64, func(c *EmbeddingsFeaturizerConfig) { c.CacheSize = -1; c.MaxBatch = 3 }))
}

func TestEmbedURLEnvOverridesTheSnapshotURL(t *testing.T) {
	srv := newEmbedServer(t, 16)
	spec := prm.FeaturizerSpec{Name: EmbeddingsFeaturizerName,
		Params: json.RawMessage(`{"url":"http://127.0.0.1:1/v1","model":"` + testEmbedModel + `","dim":16}`)}
	t.Setenv(EmbedURLEnv, srv.URL+"/v1")
	f, err := prm.NewFeaturizer(spec)
	if err != nil {
		t.Fatal(err)
	}
	bf := f.(prm.BatchFeaturizer)
	if err := bf.FeaturesBatch(context.Background(), []prm.StepText{{Instruction: "i", Observation: "o", Action: "a"}}, make([]float32, 16)); err != nil {
		t.Fatalf("the override was not used: %v", err)
	}
	if got := f.(*EmbeddingsFeaturizer).Config().URL; got != srv.URL+"/v1" {
		t.Errorf("URL %q, want the override", got)
	}
}

// The spec a snapshot records, in a golden file: what a PRM snapshot of
// the embeddings featurizer holds.
func TestEmbeddingsSpecGolden(t *testing.T) {
	f, err := NewEmbeddingsFeaturizer(EmbeddingsFeaturizerConfig{URL: "http://localhost:8000/v1", Model: "Qwen/Qwen3-Embedding-0.6B", Dim: 1024,
		Endpoint: EndpointConfig{APIKey: "sk-never-stored"}})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := json.Marshal(f.Spec())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "embeddings_spec.golden.json", indent(t, spec))
}
