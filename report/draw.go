package report

import (
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Sizes of a plot image.
const (
	plotWidth   = 8 * vg.Inch
	panelHeight = 3 * vg.Inch
	margin      = vg.Length(8)  // points
	legendGap   = vg.Length(14) // between legend entries in a row
	legendRow   = vg.Length(4)  // between legend rows, and above the first
)

// markers are filled, so a curve of a single point is a visible mark; each
// later curve of a panel draws its marks smaller, so marks at the same
// point nest instead of hiding each other.
var markers = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}}

// layout records where a chart's parts were drawn.
type layout struct {
	image   vg.Rectangle
	data    []vg.Rectangle // each panel's data area
	legends []vg.Rectangle // each panel's legend entries
	note    vg.Rectangle   // the note's lines; empty without a note
}

// legendEntry is one curve, styled: its name, line and marks.
type legendEntry struct {
	name  string
	line  *plotter.Line
	marks *plotter.Scatter
}

// height is the image height: the panels, each with room for the tallest
// legend below it, and the note.
func (c *chart) height() vg.Length {
	n := vg.Length(len(c.panels))
	return 2*margin + n*(panelHeight+c.legendHeight()) + c.noteHeight()
}

func (c *chart) legendHeight() vg.Length {
	rows := 0
	for _, p := range c.panels {
		rows = max(rows, len(packRows(p.legendEntries(), legendWidth())))
	}
	return vg.Length(rows)*(entryHeight()+legendRow) + legendRow
}

func (c *chart) noteHeight() vg.Length {
	if c.note == "" {
		return 0
	}
	return vg.Length(len(c.noteLines()))*entryHeight() + legendRow
}

// draw draws the chart's panels over the whole canvas, their data areas
// aligned, and returns where it drew them.
func (c *chart) draw(dc draw.Canvas) layout {
	legH := c.legendHeight()
	plots := make([][]*plot.Plot, len(c.panels))
	xlo, xhi := c.xRange()
	for i := range c.panels {
		plots[i] = []*plot.Plot{c.plot(i, xlo, xhi)}
	}
	tiles := draw.Tiles{Rows: len(c.panels), Cols: 1, PadTop: margin, PadBottom: margin + legH + c.noteHeight(),
		PadLeft: margin, PadRight: margin, PadY: legH}
	canvases := plot.Align(plots, tiles, dc)
	lay := layout{image: dc.Rectangle}
	for i, p := range c.panels {
		pc := canvases[i][0]
		plots[i][0].Draw(pc)
		lay.data = append(lay.data, plots[i][0].DataCanvas(pc).Rectangle)
		top := vg.Point{X: dc.Min.X + margin, Y: tiles.At(dc, 0, i).Min.Y - legendRow}
		lay.legends = append(lay.legends, drawLegend(dc, top, p.legendEntries()))
	}
	if c.note != "" {
		lay.note = c.drawNote(dc, vg.Point{X: dc.Min.X + margin, Y: dc.Min.Y + margin + c.noteHeight() - legendRow})
	}
	return lay
}

// plot builds panel i's plot over the x range [xlo, xhi].
func (c *chart) plot(i int, xlo, xhi float64) *plot.Plot {
	panel := c.panels[i]
	p := plot.New()
	if i == 0 {
		p.Title.Text = c.spec.Title
	}
	p.X.Label.Text = c.spec.XLabel
	p.Y.Label.Text = panel.YLabel
	p.Add(plotter.NewGrid())
	for _, e := range panel.legendEntries() {
		p.Add(e.line, e.marks)
	}
	p.X.Min, p.X.Max = xlo, xhi
	p.Y.Min, p.Y.Max = panel.yRange()
	return p
}

// legendEntries styles the panel's curves and returns them as legend
// entries, in curve order.
func (p chartPanel) legendEntries() []legendEntry {
	out := make([]legendEntry, 0, len(p.curves))
	for j, cv := range p.curves {
		line, marks, err := plotter.NewLinePoints(cv.points)
		if err != nil { // cannot happen: curves holds finite points only
			continue
		}
		col := plotutil.Color(j)
		line.Color, line.Width, line.Dashes = col, vg.Points(1.5), plotutil.Dashes(j)
		marks.Color, marks.Shape = col, markers[j%len(markers)]
		marks.Radius = max(vg.Points(5)-vg.Points(1.2)*vg.Length(j), vg.Points(2.5))
		out = append(out, legendEntry{name: cv.name, line: line, marks: marks})
	}
	return out
}

// xRange is the x range of every panel: the data's, padded so that marks
// at the ends are drawn whole.
func (c *chart) xRange() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, p := range c.panels {
		for _, cv := range p.curves {
			for _, pt := range cv.points {
				lo, hi = math.Min(lo, pt.X), math.Max(hi, pt.X)
			}
		}
	}
	return pad(lo, hi, math.Max(1, math.Abs(lo)*0.05))
}

// yRange is the panel's y range: the data's, or [0, 1] widened to the data
// for a fraction, padded.
func (p chartPanel) yRange() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	if p.Fraction {
		lo, hi = 0, 1
	}
	for _, cv := range p.curves {
		for _, pt := range cv.points {
			lo, hi = math.Min(lo, pt.Y), math.Max(hi, pt.Y)
		}
	}
	return pad(lo, hi, math.Max(0.5, math.Abs(lo)*0.1))
}

// pad widens [lo, hi] by 5% on each side, or by ifFlat when lo == hi.
func pad(lo, hi, ifFlat float64) (float64, float64) {
	if d := (hi - lo) * 0.05; d > 0 {
		return lo - d, hi + d
	}
	return lo - ifFlat, hi + ifFlat
}

// drawLegend draws the entries in rows below top (their top left corner)
// and returns the rectangle they cover.
func drawLegend(dc draw.Canvas, top vg.Point, entries []legendEntry) vg.Rectangle {
	box := vg.Rectangle{Min: top, Max: top}
	y := top.Y
	for _, row := range packRows(entries, legendWidth()) {
		x := top.X
		for _, e := range row {
			r := vg.Rectangle{Min: vg.Point{X: x, Y: y - entryHeight()}, Max: vg.Point{X: x + entryWidth(e), Y: y}}
			l := entryLegend(e)
			l.Draw(draw.Canvas{Canvas: dc.Canvas, Rectangle: r})
			box = union(box, r)
			x = r.Max.X + legendGap
		}
		y -= entryHeight() + legendRow
	}
	return box
}

func union(a, b vg.Rectangle) vg.Rectangle {
	return vg.Rectangle{
		Min: vg.Point{X: min(a.Min.X, b.Min.X), Y: min(a.Min.Y, b.Min.Y)},
		Max: vg.Point{X: max(a.Max.X, b.Max.X), Y: max(a.Max.Y, b.Max.Y)},
	}
}

// packRows splits entries into rows no wider than width (an entry wider
// than width has a row of its own).
func packRows(entries []legendEntry, width vg.Length) [][]legendEntry {
	var rows [][]legendEntry
	var used vg.Length
	for _, e := range entries {
		w := entryWidth(e)
		if len(rows) == 0 || used+legendGap+w > width {
			rows = append(rows, nil)
			used = -legendGap
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], e)
		used += legendGap + w
	}
	return rows
}

func legendWidth() vg.Length { return plotWidth - 2*margin }

// entryLegend is a legend of the one entry e, drawn from the top left
// corner of its canvas.
func entryLegend(e legendEntry) plot.Legend {
	l := plot.NewLegend()
	l.Top, l.Left = true, true
	if e.line != nil {
		l.Add(e.name, e.line, e.marks)
	}
	return l
}

// entryWidth is the width of e's mark, gap and text.
func entryWidth(e legendEntry) vg.Length {
	l := plot.NewLegend()
	return l.ThumbnailWidth + l.TextStyle.Width(" "+e.name)
}

// entryHeight is the height of a legend entry, descenders included.
func entryHeight() vg.Length {
	sty := plot.NewLegend().TextStyle
	return sty.Rectangle("Xg").Max.Y + sty.FontExtents().Descent
}

// noteLines wraps the note to the image's width.
func (c *chart) noteLines() []string {
	sty := plot.NewLegend().TextStyle
	var lines []string
	for _, w := range strings.Fields(c.note) {
		if n := len(lines); n > 0 && sty.Width(lines[n-1]+" "+w) <= legendWidth() {
			lines[n-1] += " " + w
			continue
		}
		lines = append(lines, w)
	}
	return lines
}

// drawNote writes the note's lines below top and returns the rectangle
// they cover.
func (c *chart) drawNote(dc draw.Canvas, top vg.Point) vg.Rectangle {
	sty := plot.NewLegend().TextStyle
	sty.Color = color.Black
	box := vg.Rectangle{Min: top, Max: top}
	for _, line := range c.noteLines() {
		top.Y -= entryHeight()
		dc.FillText(sty, vg.Point{X: top.X, Y: top.Y + sty.FontExtents().Descent}, line)
		box = union(box, vg.Rectangle{Min: top, Max: vg.Point{X: top.X + sty.Width(line), Y: top.Y + entryHeight()}})
	}
	return box
}
