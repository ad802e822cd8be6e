package reporttest_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/report"
	"github.com/rspo-dev/rspo/report/reporttest"
	"github.com/rspo-dev/rspo/schemas"
)

// The reader gets back what report writes, and refuses a flipped bit.
func TestEventFileReadsWhatReportWrites(t *testing.T) {
	dir := t.TempDir()
	evs := []schemas.MetricsEvent{
		{Run: "r", Component: "learner", Kind: "update", Time: time.Unix(1, 0), Update: 1, Values: map[string]float64{"loss": 0.5}},
		{Run: "r", Component: "learner", Kind: "eval", Time: time.Unix(2, 0), Update: 1, Values: map[string]float64{"success_rate": 0.25},
			Labels: map[string]string{"split": "eval_in_distribution"}},
	}
	if _, err := report.Write(dir, evs, nil); err != nil {
		t.Fatal(err)
	}
	got := reporttest.EventFile(t, dir)
	want := []reporttest.Scalar{{1, "update/loss", 0.5}, {1, "eval/in_distribution/success_rate", 0.25}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got %+v, want %+v", got, want)
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "events.out.tfevents.*"))
	b, _ := os.ReadFile(paths[0])
	b[len(b)-6] ^= 1
	if _, err := reporttest.Records(b); err == nil {
		t.Error("a flipped bit went unnoticed")
	}
	if rows := reporttest.CSV(t, filepath.Join(dir, "metrics_update.csv")); len(rows) != 2 {
		t.Errorf("update table: %v", rows)
	}
}
