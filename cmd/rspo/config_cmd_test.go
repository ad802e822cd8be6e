package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/pipeline"
)

// --print-config prints the effective settings as YAML: the file's keys,
// the flags over them, every default; reading it back gives those options.
func TestPrintConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "run.yaml")
	if err := os.WriteFile(cfg, []byte("env: shop\nk: 5\ngroup: 6\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		args      []string
		want, not []string
	}{
		{"run", []string{"run", "--config", cfg, "--k", "2", "--print-config"},
			[]string{"run: shop-gigpo-rspo-prm-tilt-s1\n", "algo: gigpo\n", "recipe: tilted\n", "explore-tilt: 10\n", "env: shop\n", "k: 2\n", "group: 6\n", "explore-group: 3\n", "keep-versions: 5\n", "actors: 1\n", "data: runs\n"}, nil},
		{"serve learner", []string{"serve", "learner", "--config", cfg, "--print-config"},
			[]string{"k: 5\n", "keep-versions: 8\n"}, []string{"actors:", "data:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, err := runRspo(testContext(t), tt.args...)
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
			printed := filepath.Join(dir, "printed-"+strings.ReplaceAll(tt.name, " ", "-")+".yaml")
			if err := os.WriteFile(printed, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			o := defaultRunOptions()
			if _, err := pipeline.LoadOptionsFile(printed, &o); err != nil {
				t.Fatalf("printed configuration does not read back: %v", err)
			}
			if o.Env != "shop" || o.GroupSize != 6 {
				t.Errorf("read back %+v", o)
			}
		})
	}
}

func TestRunConfigFileErrorsNamePlaceAndKey(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ name, file, text, want string }{
		{"yaml", "bad.yaml", "env: shop\ntasks: many\n", `bad.yaml:2:8: key "tasks": "many" is not an integer`},
		{"json", "bad.json", "{\"env\": \"shop\",\n \"tasks\": true}", `bad.json:2:11: key "tasks": true is not an integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.file)
			if err := os.WriteFile(path, []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := runRspo(testContext(t), "run", "--config", path, "--print-config")
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "--config: ") {
				t.Fatalf("got %v, want --config: ... %s", err, tt.want)
			}
		})
	}
}

// A list flag given with --config replaces the file's list, once: it used
// to be re-applied through its printed form, adding "[foo]" as an item.
func TestConfigListFlagsReplaceTheFilesLists(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "run.yaml")
	if err := os.WriteFile(cfg, []byte("prm-source: [filed]\neval-splits: [in]\nenv-opt: {preset: easy, task_types: pick_and_place}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := runRspo(testContext(t), "run", "--config", cfg,
		"--prm-source", "foo", "--prm-source", "bar", "--eval-splits", "in,out",
		"--env-opt", "preset=medium", "--print-config")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	path := filepath.Join(dir, "printed.yaml")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	o := defaultRunOptions()
	if _, err := pipeline.LoadOptionsFile(path, &o); err != nil {
		t.Fatalf("printed configuration does not read back: %v\n%s", err, out)
	}
	if !slices.Equal(o.PRMSources, []string{"foo", "bar"}) {
		t.Errorf("prm-source = %q, want [foo bar]\n%s", o.PRMSources, out)
	}
	if !slices.Equal(o.EvalSplits, []string{"in", "out"}) {
		t.Errorf("eval-splits = %q, want [in out]\n%s", o.EvalSplits, out)
	}
	if o.EnvOptions["preset"] != "medium" || o.EnvOptions["task_types"] != "pick_and_place" {
		t.Errorf("env-opt = %v, want the flag's preset over the file's, the file's task_types kept\n%s", o.EnvOptions, out)
	}
}
