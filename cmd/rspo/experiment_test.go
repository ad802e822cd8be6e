package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExperimentCommandErrors(t *testing.T) {
	suites := filepath.Join("..", "..", "experiments", "suites")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "unknown suite", args: []string{"experiment", "--suites", suites, "--suite", "nope", "--no-run"}, want: `--suite "nope": no such suite`},
		{name: "no suites dir", args: []string{"experiment", "--suites", t.TempDir(), "--no-run"}, want: "--suites"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runRspo(testContext(t), append(tt.args, "--data", t.TempDir(), "--out", t.TempDir())...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestExperimentNoRunWritesPage aggregates an empty data directory: the
// page names every suite and its command, with no figures yet.
func TestExperimentNoRunWritesPage(t *testing.T) {
	out := t.TempDir()
	suites := filepath.Join("..", "..", "experiments", "suites")
	stdout, _, err := runRspo(testContext(t), "experiment", "--suites", suites, "--no-run", "--data", t.TempDir(), "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "experiments.md") {
		t.Errorf("got stdout %q, want the page's path", stdout)
	}
	text, err := os.ReadFile(filepath.Join(out, "experiments.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"rspo experiment --suite household`", "rspo experiment --suite shop`", "_No finished runs yet._"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// Without --out the page goes under the data directory: a rerun in the
// project's checkout must not overwrite docs/experiments.md unless asked.
func TestExperimentWritesItsPageUnderTheDataByDefault(t *testing.T) {
	data := t.TempDir()
	suites := filepath.Join("..", "..", "experiments", "suites")
	if _, _, err := runRspo(testContext(t), "experiment", "--suites", suites, "--no-run", "--data", data); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(data, "page", "experiments.md")); err != nil {
		t.Errorf("the page is not under the data directory: %v", err)
	}
	if _, err := os.Stat("docs"); err == nil {
		t.Error("the experiment wrote a docs/ directory where it ran")
	}
}
