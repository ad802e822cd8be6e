package main

import (
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/llm"
	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/prm/prmtest"
	"github.com/rspo-dev/rspo/prm/trajfile"
)

// embeddingsServer serves the hash projection of a whole text as an
// embedding model named "hash-embed" of dim dimensions.
func embeddingsServer(t *testing.T, dim int) *httptest.Server {
	t.Helper()
	embed, err := llm.HashEmbedding(prm.HashProjectionConfig{Dim: dim, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	h, err := llm.NewEmbedHandler(llm.EmbedHandlerConfig{Model: "hash-embed", Embed: embed})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// TestPRMTrainEmbeddings trains a PRM on an embeddings server's features,
// evaluates the snapshot (which rebuilds the featurizer from its spec), and
// sees the evaluation fail once the server is gone.
func TestPRMTrainEmbeddings(t *testing.T) {
	ctx := testContext(t)
	dir := t.TempDir()
	data, model := filepath.Join(dir, "d.arrow"), filepath.Join(dir, "prm.bin")
	trajs, _ := prmtest.Decisive("emb", 3, 40, 4)
	if err := trajfile.Write(data, trajs); err != nil {
		t.Fatal(err)
	}
	srv := embeddingsServer(t, 48)
	out, _, err := runRspo(ctx, "prm", "train", "--file", data, "--out", model, "--epochs", "5", "--hidden", "8", "--json",
		"--featurizer", "embeddings", "--embed-endpoint", srv.URL+"/v1", "--embed-model", "hash-embed", "--embed-cache", "500")
	if err != nil {
		t.Fatal(err)
	}
	var rep prm.TrainReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Trajectories != 40 {
		t.Fatalf("report: %v\n%s", err, out)
	}
	m, err := prm.LoadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	f, ok := m.Featurizer().(*llm.EmbeddingsFeaturizer)
	if !ok {
		t.Fatalf("the snapshot's featurizer is a %T", m.Featurizer())
	}
	if cfg := f.Config(); cfg.Dim != 48 || cfg.URL != srv.URL+"/v1" || cfg.Model != "hash-embed" || cfg.CacheSize != 500 {
		t.Errorf("featurizer config %+v: want the server's 48 dimensions, its URL and model, cache 500", cfg)
	}
	out, _, err = runRspo(ctx, "prm", "eval", "--model", model, "--file", data)
	if err != nil || !strings.Contains(out, "PRM v1 on 40 trajectories") {
		t.Errorf("eval: %q, %v", out, err)
	}
	srv.Close()
	if _, _, err = runRspo(ctx, "prm", "eval", "--model", model, "--file", data); err == nil || !strings.Contains(err.Error(), "featurizer failed") {
		t.Errorf("eval with the server gone: got %v, want the featurizer's failure", err)
	}
}

func TestPRMTrainEmbeddingsFlagErrors(t *testing.T) {
	ctx := testContext(t)
	train := []string{"prm", "train", "--file", "f", "--out", "x"}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"no endpoint or model", []string{"--featurizer", "embeddings"}, []string{"--embed-endpoint URL", "--embed-model NAME"}},
		{"hash dim", []string{"--featurizer", "embeddings", "--embed-endpoint", "http://h/v1", "--embed-model", "m", "--dim", "8"}, []string{"--embed-dim"}},
		{"embed flag without featurizer", []string{"--embed-model", "m"}, []string{"--embed-model", "need --featurizer embeddings"}},
		{"unknown featurizer", []string{"--featurizer", "bert"}, []string{`--featurizer "bert"`, "hash-projection or embeddings"}},
		{"warm and featurizer", []string{"--warm", "w.bin", "--featurizer", "embeddings"}, []string{"--warm keeps"}},
		{"bad cache", []string{"--featurizer", "embeddings", "--embed-endpoint", "http://h/v1", "--embed-model", "m", "--embed-cache", "0"}, []string{"--embed-cache 0"}},
		{"batch too large", []string{"--featurizer", "embeddings", "--embed-endpoint", "http://h/v1", "--embed-model", "m", "--embed-dim", "8", "--embed-batch", "5000"}, []string{"MaxBatch"}},
		{"bad template", []string{"--featurizer", "embeddings", "--embed-endpoint", "http://h/v1", "--embed-model", "m", "--embed-dim", "8", "--embed-template", "{action}"}, []string{"{observation}"}},
		{"server unreachable", []string{"--featurizer", "embeddings", "--embed-endpoint", "http://127.0.0.1:1/v1", "--embed-model", "m", "--embed-timeout", "1s"}, []string{"or give --embed-dim"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runRspo(ctx, append(append([]string(nil), train...), tt.args...)...)
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("got %v, want an error containing %q", err, w)
				}
			}
		})
	}
}
