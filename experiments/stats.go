package experiments

import (
	"fmt"
	"math"
	"sort"
)

// MeanSD is a figure over seeds: mean, sample standard deviation, and the
// number of seeds that had it.
type MeanSD struct {
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
	N    int     `json:"n"`
}

// meanSD summarises xs, skipping NaN (a seed without the figure).
func meanSD(xs []float64) MeanSD {
	var s MeanSD
	var sum float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			sum += x
			s.N++
		}
	}
	if s.N == 0 {
		return MeanSD{Mean: math.NaN(), SD: math.NaN()}
	}
	s.Mean = sum / float64(s.N)
	if s.N > 1 {
		var ss float64
		for _, x := range xs {
			if !math.IsNaN(x) {
				ss += (x - s.Mean) * (x - s.Mean)
			}
		}
		s.SD = math.Sqrt(ss / float64(s.N-1))
	}
	return s
}

// String formats as "0.42 ± 0.05", or "–" when no seed had the figure.
func (m MeanSD) String() string { return m.Format(2) }

// Format formats with the given number of decimals.
func (m MeanSD) Format(decimals int) string {
	if m.N == 0 {
		return "–"
	}
	if m.N == 1 {
		return fmt.Sprintf("%.*f", decimals, m.Mean)
	}
	return fmt.Sprintf("%.*f ± %.*f", decimals, m.Mean, decimals, m.SD)
}

// interpolate returns the value of the piecewise linear curve through pts
// (sorted by x) at x; NaN outside the curve's x range.
func interpolate(pts []Point, x float64, xOf func(Point) float64) float64 {
	if len(pts) == 0 || x < xOf(pts[0]) || x > xOf(pts[len(pts)-1]) {
		return math.NaN()
	}
	i := sort.Search(len(pts), func(i int) bool { return xOf(pts[i]) >= x })
	if xOf(pts[i]) == x || i == 0 {
		return pts[i].Value
	}
	a, b := pts[i-1], pts[i]
	t := (x - xOf(a)) / (xOf(b) - xOf(a))
	return a.Value + t*(b.Value-a.Value)
}

func byUpdate(p Point) float64 { return float64(p.Update) }
func bySteps(p Point) float64  { return p.EnvSteps }

// windowMean is the mean value of the points with update in [lo, hi].
func windowMean(pts []Point, lo, hi int64) float64 {
	var sum float64
	n := 0
	for _, p := range pts {
		if p.Update >= lo && p.Update <= hi {
			sum += p.Value
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

func last(pts []Point) float64 {
	if len(pts) == 0 {
		return math.NaN()
	}
	return pts[len(pts)-1].Value
}

func first(pts []Point) float64 {
	if len(pts) == 0 {
		return math.NaN()
	}
	return pts[0].Value
}

func maxValue(pts []Point) float64 {
	m := math.NaN()
	for _, p := range pts {
		if math.IsNaN(m) || p.Value > m {
			m = p.Value
		}
	}
	return m
}

// MarshalJSON writes a figure no seed had as null (JSON has no NaN).
func (m MeanSD) MarshalJSON() ([]byte, error) {
	if m.N == 0 || math.IsNaN(m.Mean) {
		return []byte(`null`), nil
	}
	sd := m.SD
	if math.IsNaN(sd) {
		sd = 0
	}
	return []byte(fmt.Sprintf(`{"mean":%g,"sd":%g,"n":%d}`, m.Mean, sd, m.N)), nil
}
