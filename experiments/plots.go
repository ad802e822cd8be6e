package experiments

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// PlotSpec is one figure of a suite: a series' mean over seeds per
// variant, against learner updates or environment steps.
type PlotSpec struct {
	File, Title, YLabel string
	// Series is a RunResult.Series key.
	Series string
	// Steps puts environment steps (actors + explorers) on x instead of
	// learner updates.
	Steps bool
}

// SuitePlots are the plots drawn for every suite (a plot without data for
// any variant is skipped).
var SuitePlots = []PlotSpec{
	{File: "eval_success_vs_update.png", Title: "Eval success vs learner update", YLabel: "success rate", Series: "eval::success_rate"},
	{File: "eval_success_vs_env_steps.png", Title: "Eval success vs environment steps (explorer counted)", YLabel: "success rate", Series: "eval::success_rate", Steps: true},
	{File: "all_fail_frac.png", Title: "Fraction of all-fail on-policy groups", YLabel: "all-fail fraction", Series: "update:all_fail_frac_on"},
	{File: "repeated_visits.png", Title: "Repeated-state visits per on-policy batch", YLabel: "repeated visits", Series: "update:repeated_visits"},
	{File: "prm_auc.png", Title: "PRM held-out AUC (success vs failure)", YLabel: "AUC", Series: "prm:heldout_auc"},
	{File: "dense_return.png", Title: "Dense (PRM) return of on-policy rollouts", YLabel: "dense return", Series: "update:dense_return"},
}

// Render draws the plot for the suite's variants into dir; it returns ""
// when no variant has the series.
func (ps PlotSpec) Render(dir string, res *SuiteResult) (string, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s — %s", res.Name, ps.Title)
	p.X.Label.Text = "learner update"
	if ps.Steps {
		p.X.Label.Text = "environment steps"
	}
	p.Y.Label.Text = ps.YLabel
	p.Legend.Top = true
	p.Legend.Left = true
	drawn := 0
	for i, vr := range res.Variants {
		if vr.Source || (res.Suite != nil && !res.Suite.plotted(vr.Name)) {
			continue
		}
		mean, errs := meanCurve(vr.Runs, ps.Series, ps.Steps)
		if len(mean) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(mean)
		if err != nil {
			return "", fmt.Errorf("experiments: plot %s: %w", ps.File, err)
		}
		line.Color, points.Color = plotutil.Color(i), plotutil.Color(i)
		line.Dashes, points.Shape = plotutil.Dashes(i/7), plotutil.Shape(i)
		p.Add(line, points)
		p.Legend.Add(vr.Label, line, points)
		if bars, err := plotter.NewYErrorBars(errs); err == nil {
			bars.Color = plotutil.Color(i)
			p.Add(bars)
		}
		drawn++
	}
	if drawn == 0 {
		return "", nil
	}
	p.Add(plotter.NewGrid())
	p.BackgroundColor = color.White
	path := filepath.Join(dir, res.Name+"_"+ps.File)
	if err := p.Save(7*vg.Inch, 4.3*vg.Inch, path); err != nil {
		return "", fmt.Errorf("experiments: plot %s: %w", ps.File, err)
	}
	return path, nil
}

// errPoints are a mean curve's points with ± one sd over seeds.
type errPoints struct {
	plotter.XYs
	plotter.YErrors
}

// meanCurve averages a series over runs: by update on the updates every
// run has, or by environment steps on a grid over the range all runs cover.
func meanCurve(runs []RunResult, key string, steps bool) (plotter.XYs, errPoints) {
	var curves [][]Point
	for _, r := range runs {
		pts := r.Series[key]
		if steps {
			pts = r.stepCurve(key)
		}
		if len(pts) > 0 {
			curves = append(curves, pts)
		}
	}
	if len(curves) == 0 {
		return nil, errPoints{}
	}
	xs, xOf := commonUpdates(curves), byUpdate
	if steps {
		xs, xOf = stepGrid(curves, 16), bySteps
	}
	var mean plotter.XYs
	var e errPoints
	for _, x := range xs {
		vals := make([]float64, len(curves))
		for i, c := range curves {
			vals[i] = interpolate(c, x, xOf)
		}
		m := meanSD(vals)
		if m.N == 0 {
			continue
		}
		mean = append(mean, plotter.XY{X: x, Y: m.Mean})
		e.XYs = append(e.XYs, plotter.XY{X: x, Y: m.Mean})
		e.YErrors = append(e.YErrors, struct{ Low, High float64 }{m.SD, m.SD})
	}
	return mean, e
}

// commonUpdates are the updates present in every curve, ascending.
func commonUpdates(curves [][]Point) []float64 {
	count := map[int64]int{}
	for _, c := range curves {
		seen := map[int64]bool{}
		for _, p := range c {
			if !seen[p.Update] {
				seen[p.Update] = true
				count[p.Update]++
			}
		}
	}
	var out []float64
	for _, p := range curves[0] {
		if count[p.Update] == len(curves) && (len(out) == 0 || float64(p.Update) > out[len(out)-1]) {
			out = append(out, float64(p.Update))
		}
	}
	return out
}

// stepGrid is n environment-step points spanning the range every curve
// covers.
func stepGrid(curves [][]Point, n int) []float64 {
	lo, hi := 0.0, math.Inf(1)
	for _, c := range curves {
		lo = math.Max(lo, c[0].EnvSteps)
		hi = math.Min(hi, c[len(c)-1].EnvSteps)
	}
	if hi < lo {
		return nil
	}
	if hi == lo {
		return []float64{lo}
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = lo + (hi-lo)*float64(i)/float64(n-1)
	}
	return out
}
