package experiments

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/prm"
)

// TestSmokeSuite trains a tiny suite end to end, resumes it without
// retraining, and checks that the page holds a real table.
func TestSmokeSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("trains two small runs")
	}
	s, err := LoadSuite(filepath.Join("testdata", "smoke.json"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := &Runner{DataDir: t.TempDir(), Revision: "0123456789abcdef-modified"}
	if err := r.Run(ctx, s); err != nil {
		t.Fatal(err)
	}
	jobs, _ := s.Jobs(false)
	if _, err := os.Stat(filepath.Join(r.RunDir(jobs[0]), "nats")); !os.IsNotExist(err) {
		t.Errorf("store of finished run %s: got stat error %v, want it deleted", jobs[0].RunName(), err)
	}
	stamp := modTime(t, filepath.Join(r.ReportDir(jobs[0]), "summary.json"))
	if err := r.Run(ctx, s); err != nil {
		t.Fatal(err)
	}
	if got := modTime(t, filepath.Join(r.ReportDir(jobs[0]), "summary.json")); !got.Equal(stamp) {
		t.Errorf("second Run retrained %s: summary rewritten at %v, want kept from %v", jobs[0].RunName(), got, stamp)
	}
	res, err := r.Aggregate(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range res.Variants {
		if got := v.Figure("final_success").N; got != 1 {
			t.Errorf("variant %s: final success over %d seeds, want 1", v.Name, got)
		}
		if got := v.Figure("final_success_full").N; got != 1 {
			t.Errorf("variant %s: final policy's %d-episode evaluation over %d seeds, want 1", v.Name, FinalEvalEpisodes, got)
		}
	}
	if got := res.Variants[1].Figure("env_steps_per_update").Mean; got <= res.Variants[0].Figure("env_steps_per_update").Mean {
		t.Errorf("RSPO env steps per update %v, want more than GRPO's (explorer counted)", got)
	}
	out := t.TempDir()
	page, err := WritePage(out, []*SuiteResult{res}, PageOptions{SuitesDir: "testdata"})
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	m, err := prm.LoadFile(r.PRMFile(s.Name, "src-step"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.PRMs) != 1 || res.PRMs[0].Steer == nil || res.PRMs[0].Steer.Episodes != SteerEpisodes {
		t.Errorf("PRM reports %+v: want one, with its steering measured on %d episodes", res.PRMs, SteerEpisodes)
	}
	if m.Info.Target != prm.TargetStep {
		t.Errorf("PRM source src-step fitted to %q, want the step target", m.Info.Target)
	}
	for _, want := range []string{"## Smoke suite", "Trained by rspo revision `0123456789ab-modified`.", "| GRPO | 1 | ", "final, 512 episodes", "| RSPO+GRPO | 1 | ", "| RSPO+GRPO, tilted explorer | 1 | ", "rspo experiment --suite smoke", "![Eval success vs learner update]"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("page lacks %q:\n%s", want, text)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "experiments", "smoke_eval_success_vs_update.svg")); err != nil {
		t.Errorf("plot missing: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "experiments", "runs_smoke.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), r.DataDir) {
		i := strings.Index(string(raw), r.DataDir)
		t.Errorf("the page's raw results name the data directory %s: ...%s...", r.DataDir, raw[max(0, i-80):i+len(r.DataDir)+40])
	}
	checkCarriedPage(t, s, out, string(text))
	checkRevisions(t, ctx, r, s)
	checkFinalTypes(t, ctx, r, s, res, string(text))
}

// checkRevisions: with Runner.Revisions the aggregate counts only the runs
// those revisions trained, and a page whose suite is left without runs
// lists it as not run instead of writing its section.
func checkRevisions(t *testing.T, ctx context.Context, r *Runner, s *Suite) {
	t.Helper()
	jobs, _ := s.Jobs(false)
	for _, tc := range []struct {
		revisions []string
		runs      int
	}{
		{revisions: []string{"0123456789ab"}, runs: len(jobs)},
		{revisions: []string{"fedcba98", "0123456789ab"}, runs: len(jobs)},
		{revisions: []string{"fedcba98"}, runs: 0},
	} {
		only := *r
		only.Revisions = tc.revisions
		res, err := only.Aggregate(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.NumRuns(); got != tc.runs {
			t.Errorf("revisions %v: aggregated %d runs, want %d", tc.revisions, got, tc.runs)
		}
		if tc.runs > 0 {
			continue
		}
		page, err := WritePage(t.TempDir(), []*SuiteResult{res}, PageOptions{SuitesDir: "testdata"})
		if err != nil {
			t.Fatal(err)
		}
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(text), "## Smoke suite") || !strings.Contains(string(text), "- `smoke`: Smoke suite (`rspo experiment --suite smoke`)") {
			t.Errorf("revisions %v: the page does not list the suite as not run:\n%s", tc.revisions, text)
		}
	}
}

// checkFinalTypes: the per-type table reads the final policies' large
// evaluation; a run whose types were not cached (evaluated before they
// were) gains them, the same, from its first split evaluated again; and a
// run whose policy no longer scores its cached figure loses them, and the
// table falls back to the runs' own evaluations rather than mix the two.
func checkFinalTypes(t *testing.T, ctx context.Context, r *Runner, s *Suite, res *SuiteResult, text string) {
	t.Helper()
	if !strings.Contains(text, "the final policies evaluated on 512 episodes of the first eval split") {
		t.Errorf("per-type table not from the final evaluation:\n%s", text)
	}
	first := res.Variants[0].Runs[0]
	if len(first.FinalTypes) < 2 {
		t.Fatalf("final evaluation per type: %v, want the shop's categories", first.FinalTypes)
	}
	jobs, _ := s.Jobs(false)
	dir := r.RunDir(jobs[0])
	if err := os.Remove(filepath.Join(dir, finalTypesFile)); err != nil {
		t.Fatal(err)
	}
	again, err := r.Aggregate(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if got := again.Variants[0].Runs[0].FinalTypes; !maps.Equal(got, first.FinalTypes) {
		t.Errorf("types evaluated again: %v, want those cached before %v", got, first.FinalTypes)
	}
	var splits map[string]float64
	if err := readJSONFile(filepath.Join(dir, finalEvalFile), &splits); err != nil {
		t.Fatal(err)
	}
	splits[first.FirstSplit] += 0.5
	if err := writeJSONFile(filepath.Join(dir, finalEvalFile), splits); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, finalTypesFile)); err != nil {
		t.Fatal(err)
	}
	stale, err := r.Aggregate(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if got := stale.Variants[0].Runs[0]; got.FinalTypes != nil || got.FinalEval[first.FirstSplit] != splits[first.FirstSplit] {
		t.Errorf("a run whose cached figure its policy does not score: types %v, figure %v; want none, and the cached figure kept", got.FinalTypes, got.FinalEval)
	}
	// The mismatch is remembered, with its reason: the next aggregation
	// does not evaluate the policy again (it would log the mismatch again).
	var remembered finalTypes
	if err := readJSONFile(filepath.Join(dir, finalTypesFile), &remembered); err != nil || remembered.Types != nil || !strings.Contains(remembered.Missing, "scores") {
		t.Errorf("types cache after the mismatch: %+v (%v), want none and the reason", remembered, err)
	}
	var log strings.Builder
	saved := r.Log
	r.Log = &log
	again, err = r.Aggregate(ctx, s)
	r.Log = saved
	if err != nil {
		t.Fatal(err)
	}
	if got := again.Variants[0].Runs[0]; got.FinalTypes != nil || strings.Contains(log.String(), "scores") {
		t.Errorf("aggregated again after a mismatch: types %v, log %q; want none, and no second evaluation", got.FinalTypes, log.String())
	}
	page, err := WritePage(t.TempDir(), []*SuiteResult{stale}, PageOptions{SuitesDir: "testdata"})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(page); !strings.Contains(string(b), "the runs' last evaluation on the first eval split") {
		t.Errorf("with one run's types missing, the per-type table still reads the final evaluation:\n%s", b)
	}
}

// checkCarriedPage reads the suite's results back from the page at out
// and writes a new page from them alone: the same tables, plots redrawn,
// the section marked as not rerun.
func checkCarriedPage(t *testing.T, s *Suite, out, text string) {
	t.Helper()
	res, err := LoadPageResult(out, s, false)
	if err != nil {
		t.Fatal(err)
	}
	again := t.TempDir()
	page, err := WritePage(again, []*SuiteResult{res}, PageOptions{SuitesDir: "testdata"})
	if err != nil {
		t.Fatal(err)
	}
	carried, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	tables := func(page string) []string {
		var rows []string
		for _, line := range strings.Split(page, "\n") {
			if strings.HasPrefix(line, "|") {
				rows = append(rows, line)
			}
		}
		return rows
	}
	if got, want := tables(string(carried)), tables(text); !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("carried page's tables differ from the original's:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if want := "the figures below are the earlier page's (runs_smoke.json), trained by rspo revision `0123456789ab-modified`"; !strings.Contains(string(carried), want) {
		t.Errorf("carried page lacks %q", want)
	}
	if _, err := os.Stat(filepath.Join(again, "experiments", "smoke_eval_success_vs_update.svg")); err != nil {
		t.Errorf("carried page's plot missing: %v", err)
	}
	if _, err := LoadPageResult(t.TempDir(), s, false); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a page without the suite: got %v, want an error matching os.ErrNotExist", err)
	}
}

func modTime(t *testing.T, path string) time.Time {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.ModTime()
}
