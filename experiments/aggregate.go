package experiments

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
)

// SuiteResult is a suite aggregated over seeds.
type SuiteResult struct {
	Suite *Suite `json:"-"`
	Name  string `json:"suite"`
	Quick bool   `json:"quick"`
	// Budget is the compute-fair x: the fewest environment steps the
	// budget variant's runs (the suite's BudgetVariant, or its first
	// compared variant) spent by their last evaluation; "success@budget"
	// is read off each run's eval curve there (a run whose curve does not
	// span it has no figure).
	Budget float64 `json:"budget_env_steps"`
	// BudgetVariant names the variant that set Budget.
	BudgetVariant string `json:"budget_variant"`
	// EvalUpdates are the learner updates at which every run evaluated.
	EvalUpdates []int64 `json:"eval_updates"`
	// RepeatAt are the three updates at which repeated visits are read
	// (each the mean of a window of updates around it).
	RepeatAt [3]int64         `json:"repeat_at"`
	Variants []*VariantResult `json:"variants"`
	// PRMs reports the PRMs trained on other runs (prm_sources).
	PRMs []PRMReport `json:"prm_sources,omitempty"`
	// Revisions are the code revisions that trained the runs (each run's
	// Cost.Revision, "unrecorded" for a run without one), sorted.
	Revisions []string `json:"revisions,omitempty"`
	// CarriedFrom, when set, is the page's raw file the result was read
	// back from (LoadPageResult) instead of aggregated from runs.
	CarriedFrom string `json:"-"`
}

// VariantResult is one variant over its seeds.
type VariantResult struct {
	Name    string            `json:"name"`
	Label   string            `json:"label"`
	Source  bool              `json:"source,omitempty"`
	Config  RunConfig         `json:"config"`
	Seeds   []int64           `json:"seeds"`
	Splits  []string          `json:"splits"`
	Types   []string          `json:"task_types,omitempty"`
	Figures map[string]MeanSD `json:"figures"`
	Runs    []RunResult       `json:"runs"`
}

// unrecordedRevision stands for the revision of a run whose cost record
// has none (trained before revisions were recorded, or by a binary built
// without VCS information).
const unrecordedRevision = "unrecorded"

// Figure returns a named figure ("–" formatting when absent).
func (v *VariantResult) Figure(name string) MeanSD { return v.Figures[name] }

// Aggregate reads the finished runs of a suite and computes its figures.
// Runs not finished yet are left out (the figure's N says how many seeds
// it holds).
// PRM sources are scored on their target runs (see EvaluatePRMs).
func (r *Runner) Aggregate(ctx context.Context, s *Suite) (*SuiteResult, error) {
	jobs, err := s.Jobs(r.Quick)
	if err != nil {
		return nil, err
	}
	res := &SuiteResult{Suite: s, Name: s.Name, Quick: r.Quick}
	byName := map[string]*VariantResult{}
	for _, j := range jobs {
		vr := byName[j.Variant.Name]
		if vr == nil {
			vr = &VariantResult{Name: j.Variant.Name, Label: j.Variant.Label, Source: j.Variant.Source, Config: j.Config}
			if vr.Label == "" {
				vr.Label = vr.Name
			}
			byName[j.Variant.Name] = vr
			res.Variants = append(res.Variants, vr)
		}
		run, err := LoadRun(r.RunDir(j), r.ReportDir(j), j)
		if err != nil || !r.revisionWanted(run.Cost.Revision) {
			continue
		}
		if err := r.finalEval(ctx, r.RunDir(j), r.ReportDir(j), &run, j.Config); err != nil {
			return nil, err
		}
		// Keep the page's raw files free of where this data directory is.
		run.Summary.ReportDir = inData(r.DataDir, run.Summary.ReportDir)
		if run.Summary.Config != nil {
			c := *run.Summary.Config
			c.Data, c.PRMFile = inData(r.DataDir, c.Data), inData(r.DataDir, c.PRMFile)
			run.Summary.Config = &c
		}
		vr.Seeds = append(vr.Seeds, j.Seed)
		vr.Runs = append(vr.Runs, run)
	}
	res.frame()
	revisions := map[string]bool{}
	for _, vr := range res.Variants {
		vr.compute(res)
		for _, run := range vr.Runs {
			revisions[cmp.Or(run.Cost.Revision, unrecordedRevision)] = true
		}
	}
	res.Revisions = sortedSet(revisions)
	res.PRMs, err = r.EvaluatePRMs(ctx, s)
	return res, err
}

// revisionWanted reports whether Aggregate counts a run trained by rev
// (its cost record's revision): every run when Runner.Revisions is empty,
// else one whose revision starts with one of them.
func (r *Runner) revisionWanted(rev string) bool {
	if len(r.Revisions) == 0 {
		return true
	}
	for _, p := range r.Revisions {
		if p != "" && strings.HasPrefix(rev, p) {
			return true
		}
	}
	return false
}

// inData is path relative to the data directory dataDir, slash-separated,
// for the page's raw files, which must not name the directories of the
// machine that ran the suite; a path outside dataDir keeps only its last
// element.
func inData(dataDir, path string) string {
	if path == "" {
		return ""
	}
	root, err1 := filepath.Abs(dataDir)
	abs, err2 := filepath.Abs(path)
	if err1 == nil && err2 == nil {
		if rel, err := filepath.Rel(root, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.Base(path)
}

// frame fixes the common axes: the eval updates shared by every run, the
// env-step budget, and the three points of the repeated-visit reading.
func (res *SuiteResult) frame() {
	counts := map[int64]int{}
	runs, minUpdates := 0, int64(math.MaxInt64)
	for _, vr := range res.Variants {
		for _, run := range vr.Runs {
			runs++
			for _, p := range run.Series["eval::success_rate"] {
				counts[p.Update]++
			}
			minUpdates = min(minUpdates, run.Summary.Updates)
		}
	}
	for u, n := range counts {
		if n == runs {
			res.EvalUpdates = append(res.EvalUpdates, u)
		}
	}
	sort.Slice(res.EvalUpdates, func(a, b int) bool { return res.EvalUpdates[a] < res.EvalUpdates[b] })
	res.BudgetVariant, res.Budget = res.budget()
	if runs > 0 {
		res.RepeatAt = [3]int64{max(1, minUpdates/6), minUpdates / 2, minUpdates - minUpdates/6}
	}
}

// compute fills the variant's figures from its runs.
func (vr *VariantResult) compute(res *SuiteResult) {
	per := map[string][]float64{}
	add := func(name string, v float64) { per[name] = append(per[name], v) }
	types, splits := map[string]bool{}, map[string]bool{}
	for _, run := range vr.Runs {
		for _, f := range runFigures(run, res) {
			add(f.name, f.value)
		}
		for k := range run.Series {
			if t, ok := strings.CutPrefix(k, "eval::success_"); ok && t != "rate" {
				types[t] = true
			}
		}
		for _, s := range run.Splits() {
			splits[s] = true
		}
	}
	vr.Figures = map[string]MeanSD{}
	for name, xs := range per {
		vr.Figures[name] = meanSD(xs)
	}
	vr.Types, vr.Splits = sortedSet(types), sortedSet(splits)
}

type figure struct {
	name  string
	value float64
}

// runFigures are one run's figures, named as in VariantResult.Figures.
func runFigures(run RunResult, res *SuiteResult) []figure {
	s := run.Series
	ev := s["eval::success_rate"]
	out := []figure{
		{"final_success", last(ev)},
		{"final_score", last(s["eval::score"])},
		{"success@budget", interpolate(run.stepCurve("eval::success_rate"), res.Budget, bySteps)},
		// stuck: evaluation success never left 0 — one lucky training
		// rollout does not make a seed learn
		{"stuck", boolFigure(maxValue(ev) <= 0)},
		{"prm_auc_first", first(s["prm:heldout_auc"])},
		{"prm_auc_last", last(s["prm:heldout_auc"])},
		{"train_success_final", windowMean(s["update:success_rate"], run.Summary.Updates-2, run.Summary.Updates)},
		{"dense_return_final", windowMean(s["update:dense_return"], run.Summary.Updates-2, run.Summary.Updates)},
		{"dense_return_peak", maxValue(s["update:dense_return"])},
		{"wall_s", run.Summary.WallSeconds},
		{"peak_mib", float64(run.Cost.PeakGoBytes) / (1 << 20)},
		{"env_steps", float64(run.Summary.EnvSteps)},
		{"env_steps_per_update", float64(run.Summary.EnvSteps) / float64(max(1, run.Summary.Updates))},
	}
	if run.Summary.RSPO {
		out = append(out, figure{"clip_frac_off", meanValue(s["update:clip_frac_off"])},
			figure{"ratio_mean_off", meanValue(s["update:ratio_mean_off"])})
	}
	if run.Summary.Updates > 0 {
		u := run.Summary.Updates
		early, late := max(1, u/5), u-u/5
		out = append(out, figure{"all_fail_early", windowMean(s["update:all_fail_frac_on"], 1, early)},
			figure{"all_fail_late", windowMean(s["update:all_fail_frac_on"], late, u)})
	}
	for i, at := range res.RepeatAt {
		w := max(1, int64(len(s["update:repeated_visits"]))/12)
		out = append(out, figure{fmt.Sprintf("repeated@%d", i), windowMean(s["update:repeated_visits"], at-w, at+w)})
	}
	for _, u := range res.EvalUpdates {
		out = append(out, figure{fmt.Sprintf("success@u%d", u), interpolate(ev, float64(u), byUpdate)})
	}
	if v, ok := run.FinalEval[run.FirstSplit]; ok {
		out = append(out, figure{"final_success_full", v})
	}
	for split, v := range run.FinalEval {
		out = append(out, figure{"final_success_full:" + split, v})
	}
	for t, v := range run.FinalTypes {
		out = append(out, figure{"final_type:" + t, v})
	}
	for k, pts := range s {
		if rest, ok := strings.CutPrefix(k, "eval:"); ok && strings.HasSuffix(rest, ":success_rate") && !strings.HasPrefix(rest, ":") {
			out = append(out, figure{"final_success:" + strings.TrimSuffix(rest, ":success_rate"), last(pts)})
		}
		if t, ok := strings.CutPrefix(k, "eval::success_"); ok && t != "rate" {
			out = append(out, figure{"type:" + t, last(pts)})
		}
	}
	return out
}

func boolFigure(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func meanValue(pts []Point) float64 {
	if len(pts) == 0 {
		return math.NaN()
	}
	var sum float64
	for _, p := range pts {
		sum += p.Value
	}
	return sum / float64(len(pts))
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// budget picks the variant that sets the compute-fair x and its mean
// final environment steps.
func (res *SuiteResult) budget() (string, float64) {
	name := res.Suite.BudgetVariant
	for _, vr := range res.Variants {
		if (name == "" && !vr.Source) || vr.Name == name {
			return vr.Name, vr.minFinalSteps()
		}
	}
	return "", 0
}

// minFinalSteps is the fewest environment steps any of the variant's runs
// spent by its last evaluation (0 without runs), so every run's curve
// spans it.
func (vr *VariantResult) minFinalSteps() float64 {
	m := math.Inf(1)
	for _, run := range vr.Runs {
		if ev := run.stepCurve("eval::success_rate"); len(ev) > 0 {
			m = math.Min(m, ev[len(ev)-1].EnvSteps)
		}
	}
	if math.IsInf(m, 1) {
		return 0
	}
	return m
}

// SuccessAt reads every run's eval curve at the given environment steps.
func (vr *VariantResult) SuccessAt(steps float64) MeanSD {
	xs := make([]float64, len(vr.Runs))
	for i, run := range vr.Runs {
		xs[i] = interpolate(run.stepCurve("eval::success_rate"), steps, bySteps)
	}
	return meanSD(xs)
}
