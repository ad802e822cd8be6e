package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

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

// Panel is one set of axes of a plot.
type Panel struct {
	YLabel string
	// Fraction pins the y axis to [0, 1] (widened if a value lies outside).
	Fraction bool
	Lines    []Line
}

// PlotSpec describes one plot file: its panels, stacked over one shared x
// axis, each with its legend below it. Panels without data are left out.
type PlotSpec struct {
	File   string
	Title  string
	XLabel string
	// X is XUpdate or the name of a value carried by the same events
	// (e.g. "env_steps").
	X      string
	Panels []Panel
	// ZeroNote, if set, is written under the plot (and in report.html)
	// when every plotted value is 0, to say why.
	ZeroNote string
}

// clipZeroNote says why clip fractions are 0 with the learner's defaults.
const clipZeroNote = "Every clip fraction here is 0. With one epoch and one minibatch " +
	"(the defaults) each update takes one optimiser step, at π_θ = π_old: every ratio " +
	"sits at the centre of its clip range, so no clip can bind. " +
	"More epochs or minibatches let it bind."

// DefaultPlots are the plots of a training report. Each reads the metric
// names the learner publishes (see learner's metrics documentation).
var DefaultPlots = []PlotSpec{
	{File: "eval_success_vs_update.png", Title: "Eval success vs learner update",
		XLabel: "update", X: XUpdate,
		Panels: []Panel{{YLabel: "success rate", Fraction: true,
			Lines: []Line{{Kind: "eval", Value: "success_rate", SplitBy: "split"}}}}},
	{File: "eval_success_vs_env_steps.png", Title: "Eval success vs environment steps (actors + explorers)",
		XLabel: "environment steps", X: "env_steps",
		Panels: []Panel{{YLabel: "success rate", Fraction: true,
			Lines: []Line{{Kind: "eval", Value: "success_rate", SplitBy: "split"}}}}},
	{File: "dense_return_vs_success.png", Title: "Dense (PRM) return vs true success",
		XLabel: "update", X: XUpdate,
		Panels: []Panel{
			{YLabel: "true success rate", Fraction: true, Lines: []Line{
				{Kind: "update", Value: "success_rate", Legend: "on-policy success"},
				{Kind: "explore", Value: "success_rate", Legend: "explorer success", X: "x_update"},
			}},
			{YLabel: "dense (PRM) return", Lines: []Line{
				{Kind: "update", Value: "dense_return", Legend: "on-policy dense return"},
				{Kind: "explore", Value: "dense_return", Legend: "explorer dense return", X: "x_update"},
			}},
		}},
	{File: "clip_fractions.png", Title: "Clip fractions",
		XLabel: "update", X: XUpdate, ZeroNote: clipZeroNote,
		Panels: []Panel{{YLabel: "fraction of steps clipped", Fraction: true, Lines: []Line{
			{Kind: "update", Value: "clip_frac_on", Legend: "on-policy"},
			{Kind: "update", Value: "clip_frac_off", Legend: "off-policy (buffer)"},
		}}}},
	{File: "repeated_state_visits.png", Title: "Repeated-state visits per on-policy batch",
		XLabel: "update", X: XUpdate,
		Panels: []Panel{{YLabel: "repeated visits",
			Lines: []Line{{Kind: "update", Value: "repeated_visits", Legend: "on-policy"}}}}},
}

// Render writes the plot into dir and returns its path, or "" with a nil
// error when no event carries the plot's data.
func (s PlotSpec) Render(dir string, events []schemas.MetricsEvent) (string, error) {
	f, err := s.render(dir, events)
	return f.path, err
}

// figure is a rendered plot: its file, its title and the note under it.
type figure struct {
	path, title, note string
}

func (s PlotSpec) render(dir string, events []schemas.MetricsEvent) (figure, error) {
	c := s.chart(events)
	if c == nil {
		return figure{}, nil
	}
	img := vgimg.New(plotWidth, c.height())
	c.draw(draw.New(img))
	path := filepath.Join(dir, s.File)
	if err := savePNG(path, img); err != nil {
		return figure{}, fmt.Errorf("report: plot %s: %w", s.File, err)
	}
	return figure{path: path, title: s.Title, note: c.note}, nil
}

func savePNG(path string, img *vgimg.Canvas) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

type curve struct {
	name   string
	points plotter.XYs
}

// chart is a plot's data, ready to draw: the panels that have curves.
type chart struct {
	spec   PlotSpec
	panels []chartPanel
	note   string // the spec's ZeroNote, if it applies
}

type chartPanel struct {
	Panel
	curves []curve
}

// chart gathers the curves of every panel, or returns nil when there are
// none.
func (s PlotSpec) chart(events []schemas.MetricsEvent) *chart {
	c := &chart{spec: s}
	for _, p := range s.Panels {
		cp := chartPanel{Panel: p}
		for _, l := range p.Lines {
			cp.curves = append(cp.curves, s.curves(l, events)...)
		}
		if len(cp.curves) > 0 {
			c.panels = append(c.panels, cp)
		}
	}
	if len(c.panels) == 0 {
		return nil
	}
	if s.ZeroNote != "" && c.allZero() {
		c.note = s.ZeroNote
	}
	return c
}

func (c *chart) allZero() bool {
	for _, p := range c.panels {
		for _, cv := range p.curves {
			for _, pt := range cv.points {
				if pt.Y != 0 {
					return false
				}
			}
		}
	}
	return true
}

// curves extracts the line's finite points, one curve per SplitBy label
// value, sorted by x.
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
		if !ok || !finite(x) || !finite(y) {
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

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

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
