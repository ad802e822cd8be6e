package report

import (
	"image"
	"image/color"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/rspo-dev/rspo/schemas"
)

// shortRunEvents is a six-update run with an explorer, a PRM and one
// evaluation per split at the end.
func shortRunEvents() []schemas.MetricsEvent {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var evs []schemas.MetricsEvent
	for u := int64(1); u <= 6; u++ {
		evs = append(evs, schemas.MetricsEvent{Kind: "update", Time: t0, Update: u, Values: map[string]float64{
			"update": float64(u - 1), "success_rate": 0.05 * float64(u), "dense_return": 3 + float64(u),
			"clip_frac_on": 0, "clip_frac_off": 0, "repeated_visits": 10}})
		for k := 0; k < 2; k++ {
			evs = append(evs, schemas.MetricsEvent{Kind: "explore", Time: t0, Update: u, Values: map[string]float64{
				"x_update": float64(u) + float64(k)/3, "success_rate": 0.1, "dense_return": 5 + float64(u)}})
		}
	}
	for _, split := range []string{"eval_in_distribution", "eval_out_of_distribution"} {
		evs = append(evs, schemas.MetricsEvent{Kind: "eval", Time: t0, Update: 6,
			Values: map[string]float64{"success_rate": 0.3, "env_steps": 5000}, Labels: map[string]string{"split": split}})
	}
	return evs
}

func specByFile(t *testing.T, file string) PlotSpec {
	t.Helper()
	for _, s := range DefaultPlots {
		if s.File == file {
			return s
		}
	}
	t.Fatalf("no default plot %s", file)
	return PlotSpec{}
}

// drawChart draws the spec's chart of events on an image canvas.
func drawChart(t *testing.T, s PlotSpec, events []schemas.MetricsEvent) (*chart, *vgimg.Canvas, layout) {
	t.Helper()
	c := s.chart(events)
	if c == nil {
		t.Fatalf("%s: no data", s.File)
	}
	img := vgimg.New(plotWidth, c.height())
	return c, img, c.draw(draw.New(img))
}

func inside(r, outer vg.Rectangle) bool {
	return r.Min.X >= outer.Min.X && r.Min.Y >= outer.Min.Y && r.Max.X <= outer.Max.X && r.Max.Y <= outer.Max.Y
}

func overlap(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

func TestLegendsLieBesideTheDataInsideTheImage(t *testing.T) {
	for _, s := range DefaultPlots {
		t.Run(s.File, func(t *testing.T) {
			c, _, lay := drawChart(t, s, shortRunEvents())
			if len(lay.legends) != len(c.panels) || len(lay.data) != len(c.panels) {
				t.Fatalf("layout of %d panels: %d legends, %d data areas", len(c.panels), len(lay.legends), len(lay.data))
			}
			for i, l := range lay.legends {
				if l.Size().X <= 0 || l.Size().Y <= 0 {
					t.Errorf("legend %d is empty: %v", i, l)
				}
				if !inside(l, lay.image) {
					t.Errorf("legend %d %v is cut off by the image %v", i, l, lay.image)
				}
				for j, d := range lay.data {
					if overlap(l, d) {
						t.Errorf("legend %d %v covers the data area of panel %d %v", i, l, j, d)
					}
				}
			}
		})
	}
}

func TestLongLegendsWrapInsideTheImage(t *testing.T) {
	s := PlotSpec{File: "long.png", X: XUpdate, Panels: []Panel{{YLabel: "y", Lines: []Line{
		{Kind: "update", Value: "a", Legend: "a rather long legend entry that takes up much of the width"},
		{Kind: "update", Value: "b", Legend: "another rather long legend entry that will not fit beside it"},
	}}}}
	evs := []schemas.MetricsEvent{{Kind: "update", Update: 1, Values: map[string]float64{"a": 1, "b": 2}}}
	_, _, lay := drawChart(t, s, evs)
	l := lay.legends[0]
	if !inside(l, lay.image) || overlap(l, lay.data[0]) {
		t.Errorf("legend %v: image %v, data %v", l, lay.image, lay.data[0])
	}
	if rows := len(packRows(s.chart(evs).panels[0].legendEntries(), legendWidth())); rows != 2 {
		t.Errorf("legend rows: got %d, want 2", rows)
	}
}

func curveNames(p chartPanel) []string {
	var names []string
	for _, c := range p.curves {
		names = append(names, c.name)
	}
	return names
}

func TestSuccessAndDenseReturnHaveTheirOwnAxes(t *testing.T) {
	c, _, lay := drawChart(t, specByFile(t, "dense_return_vs_success.png"), shortRunEvents())
	if len(c.panels) != 2 {
		t.Fatalf("panels: got %d, want 2", len(c.panels))
	}
	if got, want := curveNames(c.panels[0]), []string{"on-policy success", "explorer success"}; !slices.Equal(got, want) {
		t.Errorf("first panel: got %v, want %v", got, want)
	}
	if got, want := curveNames(c.panels[1]), []string{"on-policy dense return", "explorer dense return"}; !slices.Equal(got, want) {
		t.Errorf("second panel: got %v, want %v", got, want)
	}
	if lo, hi := c.panels[0].yRange(); lo > 0 || lo < -0.1 || hi < 1 || hi > 1.1 {
		t.Errorf("success axis [%v, %v], want about [0, 1]", lo, hi)
	}
	if lo, _ := c.panels[1].yRange(); lo < 3 {
		t.Errorf("dense return axis starts at %v, below its data (4 and up)", lo)
	}
	if overlap(lay.data[0], lay.data[1]) {
		t.Errorf("panels overlap: %v and %v", lay.data[0], lay.data[1])
	}
}

func TestPanelsWithoutDataAreLeftOut(t *testing.T) {
	var evs []schemas.MetricsEvent
	for _, m := range shortRunEvents() {
		if m.Kind == "update" {
			delete(m.Values, "dense_return")
			evs = append(evs, m)
		}
	}
	c := specByFile(t, "dense_return_vs_success.png").chart(evs)
	if c == nil || len(c.panels) != 1 || c.panels[0].YLabel != "true success rate" {
		t.Fatalf("chart without dense returns: %+v", c)
	}
}

// pixelsNear counts the pixels of img inside r (in canvas coordinates)
// whose colour is within 24 of want in each channel.
func pixelsNear(img image.Image, dpi float64, r vg.Rectangle, want color.Color) int {
	h := img.Bounds().Dy()
	px := func(l vg.Length) int { return int(float64(l) / vg.Inch.Points() * dpi) }
	wr, wg, wb, _ := want.RGBA()
	n := 0
	for y := h - px(r.Max.Y); y < h-px(r.Min.Y); y++ {
		for x := px(r.Min.X); x < px(r.Max.X); x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if near(cr, wr) && near(cg, wg) && near(cb, wb) {
				n++
			}
		}
	}
	return n
}

func near(a, b uint32) bool {
	d := int(a>>8) - int(b>>8)
	return d >= -24 && d <= 24
}

func TestSinglePointsAreVisibleMarks(t *testing.T) {
	var evs []schemas.MetricsEvent
	for _, m := range shortRunEvents() {
		if m.Kind == "eval" {
			evs = append(evs, m)
		}
	}
	_, img, lay := drawChart(t, specByFile(t, "eval_success_vs_update.png"), evs)
	for i, split := range []string{"eval_in_distribution", "eval_out_of_distribution"} {
		if n := pixelsNear(img.Image(), img.DPI(), lay.data[0], plotutil.Color(i)); n < 25 {
			t.Errorf("%s: its one point covers %d pixels of its colour, want at least 25", split, n)
		}
	}
}

func TestAxesLeaveRoomAroundTheData(t *testing.T) {
	tests := []struct {
		name           string
		fraction       bool
		ys             []float64
		wantLo, wantHi float64 // the range must reach past these
	}{
		{"fraction", true, []float64{0.2, 0.3}, 0, 1},
		{"fraction above one", true, []float64{0.5, 1.5}, 0, 1.5},
		{"free", false, []float64{4, 9}, 4, 9},
		{"flat", false, []float64{7, 7}, 7, 7},
		{"flat at zero", false, []float64{0, 0}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pts plotter.XYs
			for i, y := range tt.ys {
				pts = append(pts, plotter.XY{X: float64(i), Y: y})
			}
			p := chartPanel{Panel: Panel{Fraction: tt.fraction}, curves: []curve{{name: "c", points: pts}}}
			if lo, hi := p.yRange(); !(lo < tt.wantLo && hi > tt.wantHi) {
				t.Errorf("y range [%v, %v] does not reach past [%v, %v]", lo, hi, tt.wantLo, tt.wantHi)
			}
		})
	}
	one := &chart{panels: []chartPanel{{curves: []curve{{points: plotter.XYs{{X: 6, Y: 1}}}}}}}
	if lo, hi := one.xRange(); !(lo < 6 && hi > 6) {
		t.Errorf("x range of one point at 6: [%v, %v]", lo, hi)
	}
}

// darkPixels counts the pixels of img inside r that are nearly black.
func darkPixels(img image.Image, dpi float64, r vg.Rectangle) int {
	return pixelsNear(img, dpi, r, color.Black)
}

func TestClipPlotSaysWhyItIsZero(t *testing.T) {
	zero := shortRunEvents()
	bound := shortRunEvents()
	for _, m := range bound {
		if m.Kind == "update" && m.Update == 3 {
			m.Values["clip_frac_off"] = 0.02
		}
	}
	tests := []struct {
		name     string
		events   []schemas.MetricsEvent
		wantNote bool
	}{
		{"every fraction zero", zero, true},
		{"a fraction above zero", bound, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, img, lay := drawChart(t, specByFile(t, "clip_fractions.png"), tt.events)
			if got := c.note != ""; got != tt.wantNote {
				t.Fatalf("note %q, want one: %v", c.note, tt.wantNote)
			}
			if !tt.wantNote {
				if lay.note.Size().Y != 0 {
					t.Errorf("note drawn without a note: %v", lay.note)
				}
				return
			}
			if !strings.Contains(c.note, "one epoch") || !strings.Contains(c.note, "π_θ = π_old") {
				t.Errorf("note does not give the reason: %q", c.note)
			}
			if !inside(lay.note, lay.image) || overlap(lay.note, lay.data[0]) || overlap(lay.note, lay.legends[0]) {
				t.Errorf("note %v: image %v, data %v, legend %v", lay.note, lay.image, lay.data[0], lay.legends[0])
			}
			if n := darkPixels(img.Image(), img.DPI(), lay.note); n < 200 {
				t.Errorf("note area has %d dark pixels: no text drawn", n)
			}
		})
	}
}

func TestRenderReportsTheNote(t *testing.T) {
	f, err := specByFile(t, "clip_fractions.png").render(t.TempDir(), shortRunEvents())
	if err != nil {
		t.Fatal(err)
	}
	if f.note != clipZeroNote || f.title != "Clip fractions" || f.path == "" {
		t.Errorf("figure: %+v", f)
	}
}

func TestCurvesSkipNonFinitePoints(t *testing.T) {
	evs := shortRunEvents()
	for _, m := range evs {
		if m.Kind == "update" && m.Update == 2 {
			m.Values["success_rate"] = math.NaN()
		}
		if m.Kind == "update" && m.Update == 4 {
			m.Values["success_rate"] = math.Inf(1)
		}
	}
	s := specByFile(t, "dense_return_vs_success.png")
	cs := s.curves(s.Panels[0].Lines[0], evs)
	if len(cs) != 1 || len(cs[0].points) != 4 {
		t.Fatalf("curves: %+v, want one of 4 points", cs)
	}
	if _, err := s.Render(t.TempDir(), evs); err != nil {
		t.Errorf("render with non-finite values: %v", err)
	}
}
