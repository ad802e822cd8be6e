package pipeline

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/report/reporttest"
)

// liveRun is a short run of the base algorithm from options, so that it
// saves config.yaml.
func liveRun(t *testing.T, run, dir string, set func(*Options)) Config {
	t.Helper()
	return tinyRecipeRun(t, run, dir, func(o *Options) {
		o.Recipe, o.RSPO, o.Updates, o.Tasks, o.GroupSize, o.EvalEvery = RecipePaper, false, 4, 4, 2, 2
		set(o)
	})
}

// reportRows returns the update column of the report's update table (no
// header) and the steps of its events' update/success_rate in the event
// file, each read as a user's tools read them.
func reportRows(t *testing.T, dir string) (csvUpdates []string, tbSteps []int64) {
	t.Helper()
	for _, row := range reporttest.CSV(t, filepath.Join(dir, "metrics_update.csv"))[1:] {
		csvUpdates = append(csvUpdates, row[3])
	}
	for _, s := range reporttest.EventFile(t, dir) {
		if s.Tag == "update/success_rate" {
			tbSteps = append(tbSteps, s.Step)
		}
	}
	return csvUpdates, tbSteps
}

// waitFor polls cond until it holds; the bound only keeps a broken run
// from hanging the test.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}

// While a run trains — held at its second update — its report directory
// already holds config.yaml, a valid TensorBoard event file and the CSV
// rows of the updates done; when it ends, every update once and the page.
func TestReportIsWrittenWhileTheRunTrains(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	dir := t.TempDir()
	cfg := liveRun(t, "live", dir, func(*Options) {})
	held, release := make(chan struct{}), make(chan struct{})
	cfg.Progress = func(p learnersvc.Progress) {
		if p.Update == 2 {
			close(held)
			<-release
		}
	}
	done := make(chan error, 1)
	go func() { _, err := Run(context.Background(), cfg); done <- err }()
	select {
	case <-held:
	case err := <-done:
		t.Fatalf("the run ended before its second update: %v", err)
	}
	rdir := filepath.Join(dir, "live", "report")
	o := DefaultOptions()
	if _, err := LoadOptionsFile(filepath.Join(rdir, ConfigFile), &o); err != nil || o.Run != "live" || o.Updates != 4 {
		t.Errorf("config.yaml during the run: %v, run %q, %d updates", err, o.Run, o.Updates)
	}
	waitFor(t, "the rows of updates 1 and 2", func() bool {
		b, _ := os.ReadFile(filepath.Join(rdir, "metrics_update.csv"))
		return strings.Count(string(b), "\n") >= 3
	})
	rows, steps := reportRows(t, rdir)
	if !slices.Equal(rows, []string{"1", "2"}) || !slices.Equal(steps, []int64{1, 2}) {
		t.Errorf("held at update 2: CSV rows of updates %v, event file steps %v; want 1 and 2", rows, steps)
	}
	if _, err := os.Stat(filepath.Join(rdir, "report.html")); !os.IsNotExist(err) {
		t.Errorf("report.html before the run ended: %v", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	rows, steps = reportRows(t, rdir)
	if !slices.Equal(rows, []string{"1", "2", "3", "4"}) || !slices.Equal(steps, []int64{1, 2, 3, 4}) {
		t.Errorf("at the end: CSV rows of updates %v, event file steps %v; want 1 to 4 once each", rows, steps)
	}
	if _, err := os.Stat(filepath.Join(rdir, "report.html")); err != nil {
		t.Error(err)
	}
}

// A run interrupted after its second update and resumed appends the rest
// to the tables it began: every update once, in one event file.
func TestResumedRunAppendsToItsReport(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	dir := t.TempDir()
	cfg := liveRun(t, "resumed", dir, func(*Options) {})
	ctx, cancel := context.WithCancel(context.Background())
	cfg.Progress = func(p learnersvc.Progress) {
		if p.Update == 2 {
			cancel()
		}
	}
	if _, err := Run(ctx, cfg); err == nil {
		t.Fatal("the interrupted run reported no error")
	}
	rdir := filepath.Join(dir, "resumed", "report")
	if rows, _ := reportRows(t, rdir); !slices.Equal(rows, []string{"1", "2"}) {
		t.Fatalf("after the interruption: rows of updates %v, want 1 and 2", rows)
	}
	if _, err := Run(context.Background(), liveRun(t, "resumed", dir, func(*Options) {})); err != nil {
		t.Fatal(err)
	}
	rows, steps := reportRows(t, rdir)
	if !slices.Equal(rows, []string{"1", "2", "3", "4"}) || !slices.Equal(steps, []int64{1, 2, 3, 4}) {
		t.Errorf("resumed: CSV rows of updates %v, event file steps %v; want 1 to 4 once each", rows, steps)
	}
}

// A run trained with RSPO sets its result beside a finished run of its
// base algorithm alone with the same settings in the same store; with no
// such run (another seed) the row is left out.
func TestReportSetsTheBaseRunBeside(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	dir := t.TempDir()
	small := func(o *Options) { o.Updates, o.Tasks, o.GroupSize, o.K, o.EvalEvery = 2, 2, 2, 1, 2 }
	base := liveRun(t, "base", dir, small)
	if _, err := Run(context.Background(), base); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		run  string
		seed int64
		want string
	}{{"rspo-same", 1, "base"}, {"rspo-other-seed", 2, ""}} {
		cfg := tinyRecipeRun(t, c.run, dir, func(o *Options) {
			small(o)
			o.Recipe, o.RSPO, o.Seed = RecipePaper, true, c.seed
			o.PRMWarmupTasks = 4
		})
		sum, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if sum.Base != nil {
			got = sum.Base.Run
		}
		if got != c.want {
			t.Errorf("%s: base run %q, want %q", c.run, got, c.want)
			continue
		}
		page, err := os.ReadFile(filepath.Join(sum.ReportDir, "report.html"))
		if err != nil {
			t.Fatal(err)
		}
		if has := strings.Contains(string(page), "GRPO alone (base)"); has != (c.want != "") {
			t.Errorf("%s: the page's base row shown %v, want %v", c.run, has, c.want != "")
		}
		if c.want != "" && (sum.Base.Final["eval_in_distribution_success_rate"] < 0 || len(sum.Base.Final) == 0 || sum.Base.EnvSteps == 0) {
			t.Errorf("%s: base run figures %+v", c.run, sum.Base)
		}
	}
}

// A report directory whose metrics.jsonl is not one (a file put there by
// hand) does not stop the run: it says so, and the report is written
// afresh from the streams at the end, every update once.
func TestCorruptTablesAreRewrittenFromTheStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	dir := t.TempDir()
	rdir := filepath.Join(dir, "corrupt", "report")
	if err := os.MkdirAll(rdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rdir, "metrics.jsonl"), []byte("not a metrics event\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := liveRun(t, "corrupt", dir, func(*Options) {})
	var log bytes.Buffer
	cfg.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "not kept live") || !strings.Contains(log.String(), "metrics.jsonl line 1") {
		t.Errorf("the log does not say why the tables were not kept live:\n%s", log.String())
	}
	rows, steps := reportRows(t, rdir)
	if !slices.Equal(rows, []string{"1", "2", "3", "4"}) || !slices.Equal(steps, []int64{1, 2, 3, 4}) {
		t.Errorf("CSV rows of updates %v, event file steps %v; want 1 to 4 once each", rows, steps)
	}
}
