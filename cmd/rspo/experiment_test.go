package main

import (
	"fmt"
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
		{name: "unknown variant", args: []string{"experiment", "--suites", suites, "--suite", "main-150", "--variant", "grpo,rspo-grpoo", "--no-run"}, want: `--variant "rspo-grpoo": suite main-150 has no such variant`},
		{name: "variant of all suites", args: []string{"experiment", "--suites", suites, "--variant", "grpo", "--no-run"}, want: "--variant needs one --suite"},
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
// page has no suite's section, and lists every suite as not run with the
// command that runs it.
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
	notRun := pageSection(string(text), "These suites have no finished runs behind this version of the page")
	for _, want := range []string{"## Suites not run for this page", "`rspo experiment --suite household`", "`rspo experiment --suite shop`", "`rspo experiment --suite same-start`"} {
		if !strings.Contains(notRun, want) {
			t.Errorf("the not-run list lacks %q:\n%s", want, notRun)
		}
	}
	if strings.Contains(string(text), "Command: `rspo experiment --suite") {
		t.Errorf("the page has a section of a suite with no runs:\n%s", text)
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

// A suite with no runs under --data keeps the figures of the page already
// at --out (rewriting a page after rerunning one suite must not empty the
// others' sections); --carry=false lists it as not run instead.
func TestExperimentCarriesSuitesNotRerun(t *testing.T) {
	suites := filepath.Join("..", "..", "experiments", "suites")
	raw, err := os.ReadFile(filepath.Join("testdata", "runs_household.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, carry := range []bool{true, false} {
		out := t.TempDir()
		if err := os.MkdirAll(filepath.Join(out, "experiments"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, "experiments", "runs_household.json"), raw, 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, err := runRspo(testContext(t), "experiment", "--suites", suites, "--no-run", "--data", t.TempDir(), "--out", out, fmt.Sprintf("--carry=%v", carry))
		if err != nil {
			t.Fatal(err)
		}
		text, err := os.ReadFile(filepath.Join(out, "experiments.md"))
		if err != nil {
			t.Fatal(err)
		}
		section := pageSection(string(text), "Command: `rspo experiment --suite household`")
		carried := strings.Contains(section, "_Not rerun for this version of the page: the figures below are the earlier page's (runs_household.json)") &&
			strings.Contains(section, "| GRPO | 5 | ")
		notRun := pageSection(string(text), "These suites have no finished runs behind this version of the page")
		listed := strings.Contains(notRun, "`rspo experiment --suite household`")
		if carried != carry || listed == carry {
			t.Errorf("--carry=%v: household section carried %v, listed as not run %v:\n%s", carry, carried, listed, text)
		}
		if logged := strings.Contains(stderr, "suite household: no finished runs under --data; keeping the page's figures"); logged != carry {
			t.Errorf("--carry=%v: stderr %q", carry, stderr)
		}
		if !strings.Contains(notRun, "`rspo experiment --suite shop`") {
			t.Errorf("--carry=%v: a suite the earlier page did not hold is not listed as not run:\n%s", carry, notRun)
		}
	}
}

// pageSection is the part of a page from the "## " heading before the
// first occurrence of marker to the next "## " heading.
func pageSection(page, marker string) string {
	i := strings.Index(page, marker)
	if i < 0 {
		return ""
	}
	start := strings.LastIndex(page[:i], "\n## ")
	end := strings.Index(page[i:], "\n## ")
	if end < 0 {
		return page[start+1:]
	}
	return page[start+1 : i+end]
}
