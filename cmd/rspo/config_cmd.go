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
// precedence. It returns what the file set and where. A list flag given on the
// command line replaces the file's list: re-applying its printed form
// with Set would append "[a,b]" as one more item.
func loadRunConfig(fs *pflag.FlagSet, path string, o *runOptions) (*pipeline.OptionsFile, error) {
	var reapply []func() error
	fs.Visit(func(f *pflag.Flag) {
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			items := sv.GetSlice()
			reapply = append(reapply, func() error { return sv.Replace(items) })
			return
		}
		v := f.Value.String()
		reapply = append(reapply, func() error {
			if err := fs.Set(f.Name, v); err != nil {
				return fmt.Errorf("--%s: %w", f.Name, err)
			}
			return nil
		})
	})
	file, err := pipeline.ReadOptionsFile(path, o)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	for _, apply := range reapply {
		if err := apply(); err != nil {
			return nil, err
		}
	}
	return file, nil
}

// printRunConfig writes the effective settings of o as a YAML
// configuration file, leaving out the keys in omit; `--config` reads it
// back. Settings that do not validate are refused, each named (at its
// line of file, when file set it), and nothing is printed.
func printRunConfig(w io.Writer, o runOptions, file *pipeline.OptionsFile, omit ...string) error {
	if err := o.Validate(); err != nil {
		return file.Place(err)
	}
	return o.Effective().EncodeYAML(w, omit...)
}
