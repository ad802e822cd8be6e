package experiments

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/pipeline"
)

// A suite's section names the runs that trained cycles short of their
// exploration, and says nothing of it when none did.
func TestPageNamesRunsShortOfExploration(t *testing.T) {
	res := &SuiteResult{Revisions: []string{"abc"}, Variants: []*VariantResult{
		{Label: "RSPO+GRPO", Runs: []RunResult{{Seed: 1}, {Seed: 2, Summary: pipeline.Summary{ShortCycles: []int64{0, 4}}}}},
		{Label: "GRPO", Runs: []RunResult{{Seed: 1}}},
	}}
	var b bytes.Buffer
	writeProvenance(&b, res)
	if got, want := b.String(), "Trained short of their exploration** (the learner stopped waiting for explorers or the buffer, so those cycles' updates sampled a short buffer): RSPO+GRPO seed 2 (2 of its cycles)."; !strings.Contains(got, want) {
		t.Errorf("got:\n%s\nwant it to name the short run: %q", got, want)
	}
	res.Variants[0].Runs[1].Summary.ShortCycles = nil
	b.Reset()
	writeProvenance(&b, res)
	if strings.Contains(b.String(), "short of") {
		t.Errorf("no run is short, yet:\n%s", b.String())
	}
}

// The page's raw file keeps the per-update curves of every run at the same
// updates, at most maxPlotPoints of them and the last, and the evaluation
// curves whole.
func TestRawFileThinsPerUpdateCurves(t *testing.T) {
	var run RunResult
	run.Series = map[string][]Point{}
	for u := int64(1); u <= 150; u++ {
		run.add("update:all_fail_frac_on", Point{Update: u, EnvSteps: float64(100 * u), Value: 1 / float64(u)})
		if u%10 == 0 {
			run.add("eval::success_rate", Point{Update: u, EnvSteps: float64(100 * u), Value: float64(u) / 150})
		}
	}
	res := &SuiteResult{Name: "thin", Variants: []*VariantResult{{Name: "a", Runs: []RunResult{run, run}}}}
	path := filepath.Join(t.TempDir(), "runs_thin.json")
	if err := writeRaw(path, res); err != nil {
		t.Fatal(err)
	}
	var back SuiteResult
	if err := readJSONFile(path, &back); err != nil {
		t.Fatal(err)
	}
	for i, r := range back.Variants[0].Runs {
		curve := r.Series["update:all_fail_frac_on"]
		if len(curve) > maxPlotPoints+1 || len(curve) < maxPlotPoints/2 {
			t.Errorf("run %d: %d points of 150 kept, want at most %d and at least %d", i, len(curve), maxPlotPoints+1, maxPlotPoints/2)
		}
		if last := curve[len(curve)-1]; last.Update != 150 || last.Value != 1.0/150 {
			t.Errorf("run %d: last point %+v, want update 150's", i, last)
		}
		if got := len(r.Series["eval::success_rate"]); got != 15 {
			t.Errorf("run %d: %d evaluation points, want all 15", i, got)
		}
	}
	if a, b := back.Variants[0].Runs[0].Series["update:all_fail_frac_on"], back.Variants[0].Runs[1].Series["update:all_fail_frac_on"]; !slices.Equal(a, b) {
		t.Errorf("runs of the same length kept different updates:\n%v\n%v", a, b)
	}
	if len(run.Series["update:all_fail_frac_on"]) != 150 {
		t.Error("writeRaw thinned the result's own curves")
	}
}

// The split table shows each split's final policy evaluated again on
// FinalEvalEpisodes episodes beside the run's last evaluation, so a split
// other than the first has its larger evaluation on the page too.
func TestSplitTableShowsTheFinalEvaluationOfEverySplit(t *testing.T) {
	res := &SuiteResult{Variants: []*VariantResult{{Label: "RSPO+GRPO", Splits: []string{"in", "out"},
		Figures: map[string]MeanSD{
			"final_success:in": {Mean: 0.83, SD: 0.04, N: 5}, "final_success_full:in": {Mean: 0.81, SD: 0.03, N: 5},
			"final_success:out": {Mean: 0.78, SD: 0.05, N: 5}, "final_success_full:out": {Mean: 0.784, SD: 0.035, N: 5},
		}}}}
	var b bytes.Buffer
	writeSplitTable(&b, res)
	for _, want := range []string{"| variant | in | in, final, 512 episodes | out | out, final, 512 episodes |",
		"| RSPO+GRPO | 0.83 ± 0.04 | 0.81 ± 0.03 | 0.78 ± 0.05 | 0.78 ± 0.04 |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("split table lacks %q:\n%s", want, b.String())
		}
	}
}
