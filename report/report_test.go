package report

import (
	"encoding/csv"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/schemas"
)

func sampleEvents() []schemas.MetricsEvent {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var evs []schemas.MetricsEvent
	for u := int64(1); u <= 4; u++ {
		evs = append(evs, schemas.MetricsEvent{
			Run: "r", Component: "learner", Kind: "update", Time: t0.Add(time.Duration(u) * time.Second),
			Update: u, Values: map[string]float64{"success_rate": 0.1 * float64(u), "clip_frac_on": 0.01, "bad": math.NaN()},
		})
		for _, split := range []string{"eval_in_distribution", "eval_out_of_distribution"} {
			evs = append(evs, schemas.MetricsEvent{
				Run: "r", Component: "learner", Kind: "eval", Time: t0, Update: u,
				Values: map[string]float64{"success_rate": 0.2 * float64(u), "env_steps": 1000 * float64(u)},
				Labels: map[string]string{"split": split},
			})
		}
	}
	return evs
}

func TestWriteProducesTablesPlotsAndSummary(t *testing.T) {
	dir := t.TempDir()
	paths, err := Write(dir, sampleEvents(), map[string]float64{"final_success": 0.8})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"metrics.jsonl", "metrics_eval.csv", "metrics_update.csv",
		"eval_success_vs_update.png", "eval_success_vs_env_steps.png", "dense_return_vs_success.png",
		"clip_fractions.png", "summary.json"}
	got := map[string]bool{}
	for _, p := range paths {
		got[filepath.Base(p)] = true
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("file %s not written; got %v", w, paths)
		}
	}
	if got["repeated_state_visits.png"] {
		t.Errorf("a plot without data was written")
	}
	f, err := os.Open(filepath.Join(dir, "eval_success_vs_update.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("plot is not a PNG: %v", err)
	}
}

func TestCSVHasAColumnPerValueAndLabel(t *testing.T) {
	dir := t.TempDir()
	if _, err := Write(dir, sampleEvents(), nil); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "metrics_eval.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(rows[0], ","), "time,component,cycle,update,split,env_steps,success_rate"; got != want {
		t.Errorf("header: got %q, want %q", got, want)
	}
	if got, want := len(rows), 1+8; got != want {
		t.Errorf("rows: got %d, want %d", got, want)
	}
	if got, want := rows[len(rows)-1][6], "0.8"; got != want {
		t.Errorf("last success_rate: got %q, want %q", got, want)
	}
}

func TestJSONLDropsNonFiniteValues(t *testing.T) {
	dir := t.TempDir()
	if _, err := Write(dir, sampleEvents(), nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if got, want := len(lines), 12; got != want {
		t.Fatalf("lines: got %d, want %d", got, want)
	}
	var m schemas.MetricsEvent
	if err := json.Unmarshal([]byte(lines[0]), &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Values["bad"]; ok {
		t.Errorf("NaN value kept in JSON lines")
	}
	if got, want := m.Values["success_rate"], 0.1; got != want {
		t.Errorf("success_rate: got %v, want %v", got, want)
	}
}

func TestCurvesAreSortedAndSplitByLabel(t *testing.T) {
	spec := DefaultPlots[1] // success vs env steps, split by split label
	evs := sampleEvents()
	// reverse so that sorting is exercised
	for i, j := 0, len(evs)-1; i < j; i, j = i+1, j-1 {
		evs[i], evs[j] = evs[j], evs[i]
	}
	cs := spec.curves(spec.Panels[0].Lines[0], evs)
	if got, want := len(cs), 2; got != want {
		t.Fatalf("curves: got %d, want %d", got, want)
	}
	if cs[0].name != "eval_in_distribution" {
		t.Errorf("first curve: got %q", cs[0].name)
	}
	for i := 1; i < len(cs[0].points); i++ {
		if cs[0].points[i].X < cs[0].points[i-1].X {
			t.Fatalf("points not sorted by x: %v", cs[0].points)
		}
	}
}

func TestCSVColumnNamesAreUnique(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
		values map[string]float64
		header string
		cells  map[string]string
	}{
		{"value named like the event field", nil, map[string]float64{"update": 3, "loss": 1},
			"time,component,cycle,update,loss,value_update", map[string]string{"update": "9", "value_update": "3"}},
		{"explorer's update values", nil, map[string]float64{"update": 3, "x_update": 7.5},
			"time,component,cycle,update,value_update,x_update", map[string]string{"update": "9", "value_update": "3", "x_update": "7.5"}},
		{"label named like an event field", map[string]string{"cycle": "a"}, map[string]float64{"loss": 1},
			"time,component,cycle,update,label_cycle,loss", map[string]string{"cycle": "2", "label_cycle": "a"}},
		{"value named like a label", map[string]string{"split": "a"}, map[string]float64{"split": 1},
			"time,component,cycle,update,split,value_split", map[string]string{"split": "a", "value_split": "1"}},
		{"prefixed name already taken", nil, map[string]float64{"update": 3, "value_update": 4},
			"time,component,cycle,update,value_value_update,value_update",
			map[string]string{"update": "9", "value_value_update": "3", "value_update": "4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			evs := []schemas.MetricsEvent{{Run: "r", Component: "learner", Kind: "update", Cycle: 2, Update: 9,
				Values: tt.values, Labels: tt.labels}}
			if _, err := Write(dir, evs, nil); err != nil {
				t.Fatal(err)
			}
			rows := readCSV(t, filepath.Join(dir, "metrics_update.csv"))
			if got := strings.Join(rows[0], ","); got != tt.header {
				t.Errorf("header: got %q, want %q", got, tt.header)
			}
			cell := map[string]string{}
			for i, c := range rows[0] {
				cell[c] = rows[1][i]
			}
			for c, want := range tt.cells {
				if cell[c] != want {
					t.Errorf("column %s holds %q, want %q", c, cell[c], want)
				}
			}
		})
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
