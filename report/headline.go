package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Headline is the result a report leads with: a sentence saying what was
// trained, then a table with a row per run (this one, and others to
// compare it with) and a column per figure. Cells are text, formatted for
// people by the caller (FormatFraction, FormatSteps, FormatDuration,
// FormatBytes); an empty cell shows a dash.
type Headline struct {
	Lead    string
	Columns []string
	Rows    []HeadlineRow
}

// HeadlineRow is one run's figures, in the order of Headline.Columns.
type HeadlineRow struct {
	Name  string
	Cells []string
}

// FormatFraction shows a rate or a score in [0, 1] with two decimals: 0.72.
func FormatFraction(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// FormatSteps shows a count of environment steps with three significant
// digits and an SI prefix: 950 steps, 37.7 k steps, 1.2 M steps.
func FormatSteps(n int64) string {
	return formatSI(float64(n), []string{"", "k", "M", "G", "T"}, 1000) + " steps"
}

// FormatBytes shows a size with a binary prefix: 512 MiB, 1.6 GiB.
func FormatBytes(n int64) string {
	v, unit := float64(n), 0
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	for v >= 1000 && unit < len(units)-1 { // 1000, not 1024: "1.0 GiB" reads better than "1007 MiB"
		v, unit = v/1024, unit+1
	}
	if unit == 0 || v >= 10 {
		return fmt.Sprintf("%.0f %s", v, units[unit])
	}
	return fmt.Sprintf("%.1f %s", v, units[unit])
}

// FormatDuration shows a wall time in seconds as people say it: 4.2 s,
// 48 s, 3 min 48 s, 1 h 5 min.
func FormatDuration(seconds float64) string {
	switch s := math.Round(seconds); {
	case seconds < 10:
		return strconv.FormatFloat(seconds, 'f', 1, 64) + " s"
	case s < 60:
		return fmt.Sprintf("%.0f s", s)
	case s < 3600:
		return fmt.Sprintf("%d min %d s", int(s)/60, int(s)%60)
	default:
		m := int(math.Round(seconds / 60))
		return fmt.Sprintf("%d h %d min", m/60, m%60)
	}
}

// formatSI shows v with three significant digits, scaled by step to the
// largest prefix of prefixes that keeps it at or above 1.
func formatSI(v float64, prefixes []string, step float64) string {
	i := 0
	for math.Abs(v) >= step && i < len(prefixes)-1 {
		v, i = v/step, i+1
	}
	num := strconv.FormatFloat(v, 'f', -1, 64)
	if i > 0 {
		num = strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strings.TrimSpace(num + " " + prefixes[i])
}
