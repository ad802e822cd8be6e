package pipeline

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rspo-dev/rspo/report"
)

// headline is the result report.html leads with: what was trained, then a
// row for the run and one for its base run when the store holds one
// (Summary.Base), with final success (and score) per eval split,
// environment steps, wall time and peak memory.
func headline(s Summary) *report.Headline {
	splits := finalSplits(s.Final)
	h := &report.Headline{Lead: leadSentence(s, len(splits) > 0)}
	for _, sp := range splits {
		h.Columns = append(h.Columns, sp.column)
	}
	h.Columns = append(h.Columns, "environment steps", "wall time", "peak memory")
	h.Rows = []report.HeadlineRow{resultRow("this run", s.Final, splits, s.EnvSteps, s.WallSeconds, s.PeakRSSBytes)}
	if b := s.Base; b != nil {
		name := fmt.Sprintf("%s alone (%s)", strings.ToUpper(b.Algo), b.Run)
		h.Rows = append(h.Rows, resultRow(name, b.Final, splits, b.EnvSteps, b.WallSeconds, b.PeakRSSBytes))
	}
	return h
}

// leadSentence says what was trained, for how long, and what else its
// environment steps do not count.
func leadSentence(s Summary, evaluated bool) string {
	method := strings.ToUpper(s.Algo)
	switch {
	case s.Dense:
		method += " trained on the PRM's dense rewards"
	case s.RSPO:
		method = fmt.Sprintf("RSPO (explorer %s) with %s", s.Explore, method)
	}
	env := s.Env
	if s.Config != nil && len(s.Config.EnvOptions) > 0 {
		env += " (" + envOptionsText(s.Config.EnvOptions) + ")"
	}
	lead := fmt.Sprintf("%s on %s, %d updates, seed %d.", method, env, s.Updates, s.Seed)
	if !evaluated {
		lead += " No final evaluation: the run has not finished."
	}
	if p := s.InitPolicy; p != nil {
		from := p.Source
		if p.Run != "" {
			from = "the final policy of " + p.Run
		}
		lead += " It started from " + from + "."
	}
	if s.EnvStepsSource > 0 {
		lead += fmt.Sprintf(" The runs and demonstrations its PRM and start came from took %s more (%s in all).",
			report.FormatSteps(s.EnvStepsSource), report.FormatSteps(s.EnvSteps+s.EnvStepsSource))
	}
	return lead
}

// envOptionsText prints environment options as sorted key=value pairs.
func envOptionsText(opts map[string]string) string {
	parts := make([]string, 0, len(opts))
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		parts = append(parts, k+"="+opts[k])
	}
	return strings.Join(parts, " ")
}

// finalColumn is one figure of the final evaluation: its key in
// Summary.Final and its column's heading.
type finalColumn struct{ key, column string }

// finalSplits lists the final evaluation's success rate, and score where
// it has one, of each split: eval_success_rate and eval_score only repeat
// the first split's unless "eval" is the one split (the shop's).
func finalSplits(final map[string]float64) []finalColumn {
	var splits []string
	for k := range final {
		if sp, ok := strings.CutSuffix(k, "_success_rate"); ok {
			splits = append(splits, sp)
		}
	}
	if len(splits) > 1 {
		splits = slices.DeleteFunc(splits, func(sp string) bool { return sp == "eval" })
	}
	slices.Sort(splits)
	var out []finalColumn
	for _, sp := range splits {
		name := strings.ReplaceAll(strings.TrimPrefix(sp, "eval_"), "_", " ")
		if sp == "eval" {
			name = "held out"
		}
		out = append(out, finalColumn{sp + "_success_rate", "success, " + name})
		if _, ok := final[sp+"_score"]; ok {
			out = append(out, finalColumn{sp + "_score", "score, " + name})
		}
	}
	return out
}

// resultRow is one run's cells; a figure it lacks is left empty.
func resultRow(name string, final map[string]float64, splits []finalColumn, steps int64, wall float64, peak int64) report.HeadlineRow {
	r := report.HeadlineRow{Name: name}
	for _, sp := range splits {
		cell := ""
		if v, ok := final[sp.key]; ok {
			cell = report.FormatFraction(v)
		}
		r.Cells = append(r.Cells, cell)
	}
	cost := []string{report.FormatSteps(steps), "", ""}
	if wall > 0 {
		cost[1] = report.FormatDuration(wall)
	}
	if peak > 0 {
		cost[2] = report.FormatBytes(peak)
	}
	r.Cells = append(r.Cells, cost...)
	return r
}
