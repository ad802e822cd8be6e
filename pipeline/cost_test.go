package pipeline

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// A rerun of a finished run re-reports it: its summary's wall time is the
// two processes' together, not the rerun's alone, and its peak memory no
// lower than the first's.
func TestRerunSummaryKeepsCost(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	cfg := smallRun(t, t.TempDir(), false)
	first, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if again.Updates != first.Updates {
		t.Fatalf("the rerun did %d updates, the run %d: it should only re-report", again.Updates, first.Updates)
	}
	if again.WallSeconds <= first.WallSeconds {
		t.Errorf("wall time after the rerun %.3fs, want more than the first run's %.3fs", again.WallSeconds, first.WallSeconds)
	}
	if again.PeakRSSBytes < first.PeakRSSBytes || first.PeakRSSBytes <= 0 {
		t.Errorf("peak memory %d after the rerun, %d before; want it kept", again.PeakRSSBytes, first.PeakRSSBytes)
	}
	b, err := os.ReadFile(filepath.Join(again.ReportDir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var onDisk Summary
	if err := json.Unmarshal(b, &onDisk); err != nil {
		t.Fatal(err)
	}
	if onDisk.WallSeconds != again.WallSeconds {
		t.Errorf("summary.json wall time %.3fs, Run returned %.3fs", onDisk.WallSeconds, again.WallSeconds)
	}
}
