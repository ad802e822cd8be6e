package experiments

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"

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
	{File: "eval_success_vs_update.svg", Title: "Eval success vs learner update", YLabel: "success rate", Series: "eval::success_rate"},
	{File: "eval_success_vs_env_steps.svg", Title: "Eval success vs environment steps (explorer counted)", YLabel: "success rate", Series: "eval::success_rate", Steps: true},
	{File: "all_fail_frac.svg", Title: "Fraction of all-fail on-policy groups", YLabel: "all-fail fraction", Series: "update:all_fail_frac_on"},
	{File: "repeated_visits.svg", Title: "Repeated-state visits per on-policy batch", YLabel: "repeated visits", Series: "update:repeated_visits"},
	{File: "prm_auc.svg", Title: "PRM held-out AUC (success vs failure)", YLabel: "AUC", Series: "prm:heldout_auc"},
	{File: "dense_return.svg", Title: "Dense (PRM) return of on-policy rollouts", YLabel: "dense return", Series: "update:dense_return"},
}

// maxPlotPoints bounds the points of each variant's line. Figures are
// SVG, small enough to commit beside the page: each variant is one line
// (its colour, and a dash pattern from the eighth variant on) through at
// most maxPlotPoints points — a longer curve is thinned evenly over its
// length, its first and last points kept — with its ± 1 sd band as one
// translucent polygon.
const maxPlotPoints = 40

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
		keep := thinned(len(mean), maxPlotPoints)
		pts, band := make(plotter.XYs, len(keep)), make([]float64, len(keep))
		for k, j := range keep {
			pts[k], band[k] = mean[j], errs.YErrors[j].High
		}
		c := plotutil.Color(i)
		if poly := sdBand(pts, band, c); poly != nil {
			p.Add(poly)
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return "", fmt.Errorf("experiments: plot %s: %w", ps.File, err)
		}
		line.Color, line.Dashes = c, plotutil.Dashes(i/7)
		p.Add(line)
		p.Legend.Add(vr.Label, line)
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

// thinned returns the indices of at most max of n points, evenly spread
// and always the first and the last; every index when n ≤ max.
func thinned(n, max int) []int {
	out := make([]int, 0, min(n, max))
	if n <= max {
		for i := range n {
			out = append(out, i)
		}
		return out
	}
	for k := range max {
		out = append(out, int(math.Round(float64(k)*float64(n-1)/float64(max-1))))
	}
	return out
}

// sdBand is the polygon between mean − sd and mean + sd in a translucent
// c, or nil when every sd is 0 (one seed, or seeds that agree).
func sdBand(pts plotter.XYs, sd []float64, c color.Color) *plotter.Polygon {
	if !slices.ContainsFunc(sd, func(v float64) bool { return v > 0 }) {
		return nil
	}
	ring := make(plotter.XYs, 0, 2*len(pts))
	for k, pt := range pts {
		ring = append(ring, plotter.XY{X: pt.X, Y: pt.Y + sd[k]})
	}
	for k := len(pts) - 1; k >= 0; k-- {
		ring = append(ring, plotter.XY{X: pts[k].X, Y: pts[k].Y - sd[k]})
	}
	poly, err := plotter.NewPolygon(ring)
	if err != nil {
		return nil
	}
	r, g, b, _ := c.RGBA()
	poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 40}
	poly.LineStyle.Width = 0
	return poly
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
