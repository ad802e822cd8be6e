package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/rspo-dev/rspo/llm"
	"github.com/rspo-dev/rspo/prm"
)

// prmFeaturizerFlags choose the frozen featurizer a new PRM is trained on:
// the hashed projection (--dim, --seed) or an embedding model behind an
// OpenAI-compatible server (--embed-*).
type prmFeaturizerFlags struct {
	name            string
	endpoint, model string
	template        string
	embedDim        int
	cache, batch    int
	timeout         time.Duration
}

// embedFlags are the flags only --featurizer embeddings reads.
var embedFlags = []string{"embed-endpoint", "embed-model", "embed-dim", "embed-template", "embed-cache", "embed-batch", "embed-timeout"}

func (f *prmFeaturizerFlags) register(fs *pflag.FlagSet) {
	f.cache, f.batch, f.timeout = 16384, 256, 60*time.Second
	fs.StringVar(&f.name, "featurizer", prm.HashProjectionName, "frozen featurizer of a new PRM: "+prm.HashProjectionName+
		" (hashed words and n-grams, --dim) or "+llm.EmbeddingsFeaturizerName+" (an embedding model behind an OpenAI-compatible server, --embed-*)")
	fs.StringVar(&f.endpoint, "embed-endpoint", "", "embeddings server's base URL including /v1, e.g. http://localhost:8000/v1 (API key: $"+llm.APIKeyEnv[0]+" or $"+llm.APIKeyEnv[1]+")")
	fs.StringVar(&f.model, "embed-model", "", "embedding model's name as the server serves it")
	fs.IntVar(&f.embedDim, "embed-dim", 0, "the embedding's length, checked against every answer (default: ask the server)")
	fs.StringVar(&f.template, "embed-template", llm.DefaultStepTemplate, "how a step is rendered for the embedding model ({instruction}, {observation}, {action})")
	fs.IntVar(&f.cache, "embed-cache", f.cache, "feature vectors cached in memory (an LRU by rendered text); -1 caches none")
	countVar(fs, &f.batch, "embed-batch", fmt.Sprintf("most texts per embeddings request (at most %d)", llm.MaxEmbedBatch))
	fs.DurationVar(&f.timeout, "embed-timeout", f.timeout, "timeout of one embeddings request (each is retried 3 times)")
}

// check reports flags that contradict one another; warm says a warm start
// (which keeps its featurizer) was asked for.
func (f *prmFeaturizerFlags) check(fs *pflag.FlagSet, warm bool) error {
	var errs []error
	changed := func(names ...string) (out []string) {
		for _, n := range names {
			if fs.Changed(n) {
				out = append(out, "--"+n)
			}
		}
		return out
	}
	switch {
	case warm:
		if c := changed(append([]string{"featurizer", "dim", "action-context"}, embedFlags...)...); len(c) > 0 {
			errs = append(errs, fmt.Errorf("%v: --warm keeps the warm start's featurizer; drop them", c))
		}
	case f.name == prm.HashProjectionName:
		if c := changed(embedFlags...); len(c) > 0 {
			errs = append(errs, fmt.Errorf("%v: need --featurizer %s", c, llm.EmbeddingsFeaturizerName))
		}
	case f.name == llm.EmbeddingsFeaturizerName:
		if f.endpoint == "" {
			errs = append(errs, errors.New("--featurizer embeddings needs --embed-endpoint URL (the server's base URL, e.g. http://localhost:8000/v1)"))
		}
		if f.model == "" {
			errs = append(errs, errors.New("--featurizer embeddings needs --embed-model NAME (the embedding model the server serves)"))
		}
		if fs.Changed("dim") {
			errs = append(errs, errors.New("--dim sets the hashed projection's dimension; the embedding's length is --embed-dim"))
		}
		if fs.Changed("action-context") {
			errs = append(errs, errors.New("--action-context is a feature of the hashed projection; an embeddings featurizer sees the whole rendered step"))
		}
		if f.embedDim < 0 {
			errs = append(errs, fmt.Errorf("--embed-dim %d: give the embedding's length, or leave it out to ask the server", f.embedDim))
		}
		if f.cache == 0 || f.cache < -1 {
			errs = append(errs, fmt.Errorf("--embed-cache %d: give at least 1, or -1 for no cache", f.cache))
		}
		if f.timeout <= 0 {
			errs = append(errs, fmt.Errorf("--embed-timeout %v: give a positive duration", f.timeout))
		}
	default:
		errs = append(errs, fmt.Errorf("--featurizer %q: want %s or %s", f.name, prm.HashProjectionName, llm.EmbeddingsFeaturizerName))
	}
	return errors.Join(errs...)
}

// embeddings builds the embeddings featurizer, asking the server for the
// embedding's length unless --embed-dim gave it.
func (f *prmFeaturizerFlags) embeddings(ctx context.Context) (*llm.EmbeddingsFeaturizer, error) {
	epc := llm.EndpointConfig{URL: f.endpoint, Timeout: f.timeout}
	dim := f.embedDim
	if dim == 0 {
		ep, err := llm.NewEndpoint(epc)
		if err != nil {
			return nil, fmt.Errorf("--embed-endpoint: %w", err)
		}
		if dim, err = ep.EmbeddingDim(ctx, f.model); err != nil {
			return nil, fmt.Errorf("asking %s for the length of %s's embeddings (or give --embed-dim): %w", f.endpoint, f.model, err)
		}
	}
	feat, err := llm.NewEmbeddingsFeaturizer(llm.EmbeddingsFeaturizerConfig{URL: f.endpoint, Model: f.model, Dim: dim,
		Template: f.template, CacheSize: f.cache, MaxBatch: f.batch, Endpoint: epc})
	if err != nil {
		return nil, fmt.Errorf("--featurizer embeddings: %w", err)
	}
	return feat, nil
}
