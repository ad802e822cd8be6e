package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// FuzzRunConfigFile reads arbitrary --config files: a file is either
// refused with an error that names --config, or read, with flags given on
// the command line still taking precedence over it.
func FuzzRunConfigFile(f *testing.F) {
	for _, seed := range []string{`{"env": "shop", "k": 3}`, `{"group": 4}`, `{"seed": "x"}`, `[]`, `{"env-opt": {"preset": "easy"}}`, `{"k": 1e400}`, ``} {
		f.Add([]byte(seed))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, content []byte) {
		path := filepath.Join(dir, "run.json")
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		o := defaultRunOptions()
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		registerSettings(fs, &o, stageRun)
		if err := fs.Parse([]string{"--seed", "77"}); err != nil {
			t.Fatal(err)
		}
		if _, err := loadRunConfig(fs, path, &o); err != nil {
			if !strings.Contains(err.Error(), "--config") && !strings.Contains(err.Error(), "--seed") {
				t.Fatalf("error %q names neither the file nor the flag", err)
			}
			return
		}
		if o.Seed != 77 {
			t.Fatalf("the file overrode --seed: seed %d", o.Seed)
		}
	})
}
