package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/pipeline"
	"github.com/rspo-dev/rspo/report/reporttest"
	"github.com/rspo-dev/rspo/schemas"
)

// reportTables reads a report directory as a user's tools do and returns
// the updates of its update table's rows, of its event file's
// update/success_rate points and of its journal's update events, each
// table checked whole (rows as wide as the header, every record's CRCs).
func reportTables(t *testing.T, dir string) (csvRows, tbSteps, journal []int64) {
	t.Helper()
	for _, row := range reporttest.CSV(t, filepath.Join(dir, "metrics_update.csv"))[1:] {
		var u int64
		fmt.Sscan(row[3], &u)
		csvRows = append(csvRows, u)
	}
	for _, s := range reporttest.EventFile(t, dir) {
		if s.Tag == "update/success_rate" {
			tbSteps = append(tbSteps, s.Step)
		}
	}
	f, err := os.Open(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m schemas.MetricsEvent
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("metrics.jsonl line %q: %v", sc.Text(), err)
		}
		if m.Kind == "update" {
			journal = append(journal, m.Update)
		}
	}
	return csvRows, tbSteps, journal
}

// upTo reports whether got is 1, 2, …, len(got).
func upTo(got []int64) bool {
	for i, u := range got {
		if u != int64(i+1) {
			return false
		}
	}
	return true
}

// TestKilledRunKeepsItsReport SIGKILLs `rspo run` once its report shows
// three updates: the directory keeps config.yaml, a valid event file and
// whole CSV rows of the updates done. The same command then resumes the
// run and appends the rest: every update once in every table.
func TestKilledRunKeepsItsReport(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it; skipped with -short")
	}
	bin := buildRSPO(t)
	data := t.TempDir()
	const updates = 200
	args := []string{"run", "--data", data, "--run", "killed", "--recipe", "paper", "--rspo=false", "--env-opt", "preset=easy",
		"--updates", fmt.Sprint(updates), "--tasks", "2", "--group", "2", "--eval-every", "50", "--eval-episodes", "2"}
	p := newProc(t, bin, filepath.Join(t.TempDir(), "run.log"), args...)
	dir := filepath.Join(data, "killed", "report")
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(dir, "metrics_update.csv"))
		if strings.Count(string(b), "\n") > 3 {
			break
		}
		select {
		case err := <-p.done:
			t.Fatalf("rspo run ended before its report showed three updates: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the report showed no three updates")
		}
	}
	p.kill()
	o := defaultRunOptions()
	if _, err := pipeline.LoadOptionsFile(filepath.Join(dir, pipeline.ConfigFile), &o); err != nil || o.Run != "killed" || o.Updates != updates {
		t.Errorf("config.yaml after the kill: %v (run %q, %d updates)", err, o.Run, o.Updates)
	}
	rows, steps, journal := reportTables(t, dir)
	if len(rows) >= updates {
		t.Fatalf("the report shows all %d updates: the run had finished training when it was killed", len(rows))
	}
	if len(rows) < 3 || !upTo(rows) || !upTo(steps) || !upTo(journal) {
		t.Errorf("after the kill: CSV rows of updates %v, event file steps %v, journal %v; want each 1, 2, … from 3 on", rows, steps, journal)
	}
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("resuming: %v\n%s", err, out)
	}
	rows, steps, journal = reportTables(t, dir)
	if len(rows) != updates || !upTo(rows) || !slices.Equal(steps, rows) || !slices.Equal(journal, rows) {
		t.Errorf("resumed: %d CSV rows (in order once each: %v), event file steps %d (%v), journal %d (%v); want 1 to %d once each",
			len(rows), upTo(rows), len(steps), slices.Equal(steps, rows), len(journal), slices.Equal(journal, rows), updates)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
		t.Error(err)
	}
}
