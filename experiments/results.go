package experiments

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rspo-dev/rspo/pipeline"
	"github.com/rspo-dev/rspo/schemas"
)

// ErrResults marks run results that cannot be read.
var ErrResults = errors.New("experiments: unreadable results")

// Point is one figure of a run at a learner update and the environment
// steps (actors + explorers) spent by then.
type Point struct {
	Update   int64   `json:"u"`
	EnvSteps float64 `json:"s"`
	Value    float64 `json:"v"`
}

// RunResult is what the aggregation keeps of one finished run.
type RunResult struct {
	Run     string           `json:"run"`
	Variant string           `json:"variant"`
	Seed    int64            `json:"seed"`
	Summary pipeline.Summary `json:"summary"`
	Cost    Cost             `json:"cost"`
	// Series holds curves by key: "eval:<split>:<value>" (first split
	// also as "eval::<value>"), "update:<value>", "prm:<value>",
	// "explore:<value>".
	Series map[string][]Point `json:"series"`
	// FirstSplit is the eval split the run evaluated first (the one the
	// "eval::" series and the tables read).
	FirstSplit string `json:"first_split,omitempty"`
	// FinalEval is the final policy evaluated on FinalEvalEpisodes
	// episodes of each eval split (nil when the run kept no policy).
	FinalEval map[string]float64 `json:"final_eval,omitempty"`
	// FinalTypes is the same evaluation's success rate per task type, on
	// FirstSplit (nil when it could not be evaluated).
	FinalTypes map[string]float64 `json:"final_types,omitempty"`
}

// stepCurve is the series key with every point's environment steps
// counted from the start of the run's PRM source runs: their steps
// (Summary.EnvStepsSource) come before the run's first, so that a
// compute-fair reading at E steps charges a recipe run for the source
// runs its PRM was trained on. The series itself keeps the run's own
// steps (Point.EnvSteps, as its metrics report them).
func (r RunResult) stepCurve(key string) []Point {
	pts := r.Series[key]
	off := float64(r.Summary.EnvStepsSource)
	if off == 0 || len(pts) == 0 {
		return pts
	}
	out := make([]Point, len(pts))
	for i, p := range pts {
		p.EnvSteps += off
		out[i] = p
	}
	return out
}

// seriesKeys are the values of update, explore and prm events kept.
var seriesKeys = map[string][]string{
	"update":  {"success_rate", "all_fail_frac_on", "repeated_visits", "repeated_visits_per_traj", "dense_return", "clip_frac_off", "ratio_mean_off", "clip_frac_on"},
	"explore": {"success_rate", "dense_return"},
	"prm":     {"heldout_auc", "successes"},
}

// LoadRun reads a run's summary, cost record and metrics.
func LoadRun(runDir, reportDir string, j Job) (RunResult, error) {
	res := RunResult{Run: j.RunName(), Variant: j.Variant.Name, Seed: j.Seed, Series: map[string][]Point{}}
	if err := readJSONFile(filepath.Join(reportDir, "summary.json"), &res.Summary); err != nil {
		return res, fmt.Errorf("%w: %w", ErrResults, err)
	}
	if err := readJSONFile(filepath.Join(runDir, CostFile), &res.Cost); err != nil && !errors.Is(err, os.ErrNotExist) {
		return res, err
	}
	events, err := readMetrics(filepath.Join(reportDir, "metrics.jsonl"))
	if err != nil {
		return res, err
	}
	res.addEvents(events)
	return res, nil
}

func readMetrics(path string) ([]schemas.MetricsEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrResults, err)
	}
	defer f.Close()
	var out []schemas.MetricsEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for line := 1; sc.Scan(); line++ {
		var m schemas.MetricsEvent
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return nil, fmt.Errorf("%w: %s line %d: %w", ErrResults, path, line, err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrResults, path, err)
	}
	return out, nil
}

// addEvents files each event's kept values under their series, in update
// order. Environment steps of explore and prm events come from the latest
// update event before them.
func (r *RunResult) addEvents(events []schemas.MetricsEvent) {
	sort.SliceStable(events, func(a, b int) bool { return events[a].Time.Before(events[b].Time) })
	var steps float64
	firstSplit := ""
	for _, m := range events {
		if s, ok := m.Values["env_steps"]; ok && m.Kind != "explore" {
			steps = s
		}
		p := func(v float64) Point { return Point{Update: m.Update, EnvSteps: steps, Value: v} }
		switch m.Kind {
		case "eval":
			split := m.Labels["split"]
			if firstSplit == "" {
				firstSplit, r.FirstSplit = split, split
			}
			for k, v := range m.Values {
				r.add("eval:"+split+":"+k, p(v))
				if split == firstSplit {
					r.add("eval::"+k, p(v))
				}
			}
		case "update", "explore", "prm":
			for _, k := range seriesKeys[m.Kind] {
				if v, ok := m.Values[k]; ok {
					r.add(m.Kind+":"+k, p(v))
				}
			}
		}
	}
}

func (r *RunResult) add(key string, p Point) { r.Series[key] = append(r.Series[key], p) }

// Splits returns the eval splits the run reported, sorted.
func (r *RunResult) Splits() []string {
	var out []string
	for k := range r.Series {
		rest, ok := strings.CutPrefix(k, "eval:")
		if split, value, _ := strings.Cut(rest, ":"); ok && split != "" && value == "success_rate" {
			out = append(out, split)
		}
	}
	sort.Strings(out)
	return out
}
