package experiments

import (
	"github.com/rspo-dev/rspo/pipeline"
)

// RunConfig holds the settings of one training run under the keys of
// `rspo run --config` (pipeline.Options), so a suite's configuration can be
// replayed by hand with that command.
type RunConfig = pipeline.Options

// DefaultRunConfig is the starting point every suite's base is laid over:
// the defaults of `rspo run` (RSPO+GRPO on household, α = 1/8, k = 3) with
// the paper's recipe, which every suite was written against: a suite's
// variants name the settings they change.
func DefaultRunConfig() RunConfig {
	c := pipeline.DefaultOptions()
	c.Recipe = pipeline.RecipePaper
	return c
}

// pipelineConfig maps c to a pipeline configuration for run name run with
// the given seed, storing everything under dataDir: `rspo run`'s mapping.
func pipelineConfig(c RunConfig, run string, seed int64, dataDir string) (pipeline.Config, error) {
	c.Run, c.Seed, c.Data = run, seed, dataDir
	cfg, err := c.Config()
	if err != nil {
		return pipeline.Config{}, err
	}
	return cfg, cfg.Validate()
}
