package report

import (
	"fmt"
	"image/color"
	"path/filepath"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/rspo-dev/rspo/schemas"
)

// XUpdate selects the event's Update counter as the x axis of a plot.
const XUpdate = "update"

// Line selects the points of one curve: events of Kind, y = Values[Value],
// one curve per distinct value of the label SplitBy (if set).
type Line struct {
	Kind    string
	Value   string
	SplitBy string
	Legend  string
	// X, if set, overrides the plot's x for this line (a value name).
	X string
}

// PlotSpec describes one plot file.
type PlotSpec struct {
	File           string
	Title          string
	XLabel, YLabel string
	// X is XUpdate or the name of a value carried by the same events
	// (e.g. "env_steps").
	X     string
	Lines []Line
}

// DefaultPlots are the plots of a training report. Each reads the metric
// names the learner publishes (see learner's metrics documentation).
var DefaultPlots = []PlotSpec{
	{File: "eval_success_vs_update.png", Title: "Eval success vs learner update",
		XLabel: "update", YLabel: "success rate", X: XUpdate,
		Lines: []Line{{Kind: "eval", Value: "success_rate", SplitBy: "split"}}},
	{File: "eval_success_vs_env_steps.png", Title: "Eval success vs environment steps (actors + explorers)",
		XLabel: "environment steps", YLabel: "success rate", X: "env_steps",
		Lines: []Line{{Kind: "eval", Value: "success_rate", SplitBy: "split"}}},
	{File: "dense_return_vs_success.png", Title: "Dense (PRM) return vs true success",
		XLabel: "update", YLabel: "value", X: XUpdate,
		Lines: []Line{
			{Kind: "update", Value: "success_rate", Legend: "on-policy success"},
			{Kind: "update", Value: "dense_return", Legend: "dense return (PRM)"},
			{Kind: "explore", Value: "dense_return", Legend: "explorer dense return", X: "x_update"},
			{Kind: "explore", Value: "success_rate", Legend: "explorer success", X: "x_update"},
		}},
	{File: "clip_fractions.png", Title: "Clip fractions",
		XLabel: "update", YLabel: "fraction of steps clipped", X: XUpdate,
		Lines: []Line{
			{Kind: "update", Value: "clip_frac_on", Legend: "on-policy"},
			{Kind: "update", Value: "clip_frac_off", Legend: "off-policy (buffer)"},
		}},
	{File: "repeated_state_visits.png", Title: "Repeated-state visits per on-policy batch",
		XLabel: "update", YLabel: "repeated visits", X: XUpdate,
		Lines: []Line{{Kind: "update", Value: "repeated_visits", Legend: "on-policy"}}},
}

// Render writes the plot into dir and returns its path, or "" with a nil
// error when no event carries the plot's data.
func (s PlotSpec) Render(dir string, events []schemas.MetricsEvent) (string, error) {
	p := plot.New()
	p.Title.Text = s.Title
	p.X.Label.Text = s.XLabel
	p.Y.Label.Text = s.YLabel
	p.Legend.Top = true
	var args []any
	for _, l := range s.Lines {
		for _, c := range s.curves(l, events) {
			args = append(args, c.name, c.points)
		}
	}
	if len(args) == 0 {
		return "", nil
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return "", fmt.Errorf("report: plot %s: %w", s.File, err)
	}
	p.Add(plotter.NewGrid())
	p.BackgroundColor = color.White
	path := filepath.Join(dir, s.File)
	if err := p.Save(8*vg.Inch, 5*vg.Inch, path); err != nil {
		return "", fmt.Errorf("report: plot %s: %w", s.File, err)
	}
	return path, nil
}

type curve struct {
	name   string
	points plotter.XYs
}

// curves extracts the line's points, one curve per SplitBy label value,
// sorted by x.
func (s PlotSpec) curves(l Line, events []schemas.MetricsEvent) []curve {
	byName := map[string]plotter.XYs{}
	for _, m := range events {
		if m.Kind != l.Kind {
			continue
		}
		y, ok := m.Values[l.Value]
		if !ok {
			continue
		}
		x, ok := s.x(m, l.X)
		if !ok {
			continue
		}
		name := l.Legend
		if name == "" {
			name = l.Value
		}
		if l.SplitBy != "" && m.Labels[l.SplitBy] != "" {
			name = m.Labels[l.SplitBy]
		}
		byName[name] = append(byName[name], plotter.XY{X: x, Y: y})
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]curve, 0, len(names))
	for _, n := range names {
		pts := byName[n]
		sort.SliceStable(pts, func(i, j int) bool { return pts[i].X < pts[j].X })
		out = append(out, curve{name: n, points: pts})
	}
	return out
}

func (s PlotSpec) x(m schemas.MetricsEvent, override string) (float64, bool) {
	x := s.X
	if override != "" {
		x = override
	}
	if x == XUpdate || x == "" {
		return float64(m.Update), true
	}
	v, ok := m.Values[x]
	return v, ok
}
