package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/rspo-dev/rspo/pipeline"
)

// configUsage describes --config of `rspo run` and `rspo serve learner`.
const configUsage = "YAML (.yaml, .yml) or JSON file of run settings, keyed by flag name " +
	"(e.g. env: shop, k: 3); flags override it"

// loadRunConfig reads a run configuration file (YAML or JSON) into o,
// then re-applies the flags given on the command line so they take
// precedence. It returns the keys the file sets.
func loadRunConfig(fs *pflag.FlagSet, path string, o *runOptions) ([]string, error) {
	changed := map[string]string{}
	fs.Visit(func(f *pflag.Flag) { changed[f.Name] = f.Value.String() })
	keys, err := pipeline.LoadOptionsFile(path, o)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	for name, v := range changed {
		if err := fs.Set(name, v); err != nil {
			return nil, fmt.Errorf("--%s: %w", name, err)
		}
	}
	return keys, nil
}

// printRunConfig writes the effective settings of o as a YAML
// configuration file, leaving out the keys in omit; `--config` reads it
// back.
func printRunConfig(w io.Writer, o runOptions, omit ...string) error {
	if err := o.Validate(); err != nil {
		return err
	}
	return o.Effective().EncodeYAML(w, omit...)
}
