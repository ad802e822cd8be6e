package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/rspo-dev/rspo/report/reporttest"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// A recorded run's report can be written again from its streams alone,
// with the same summary as the run's own.
func TestReportRebuildsARecordedRun(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	o := DefaultOptions()
	o.Run, o.Data, o.EnvOptions, o.RSPO, o.Recipe = "reported", t.TempDir(), map[string]string{"preset": "easy"}, false, RecipePaper
	o.Updates, o.Tasks, o.GroupSize, o.EvalEpisodes = 2, 2, 2, 2
	cfg, err := o.Config()
	if err != nil {
		t.Fatal(err)
	}
	cfg.NATSURL, cfg.Logger = s.ClientURL(), smallRun(t, o.Data, false).Logger
	want, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want.Config == nil || want.Config.Recipe != RecipePaper || want.Config.Updates != 2 {
		t.Errorf("summary config %+v, want the run's effective options", want.Config)
	}
	raw, err := os.ReadFile(filepath.Join(want.ReportDir, "summary.json"))
	if err != nil || !strings.Contains(string(raw), `"config"`) || !strings.Contains(string(raw), `"recipe": "paper"`) {
		t.Errorf("summary.json carries no configuration (%v):\n%s", err, raw)
	}
	if _, ok := want.Final["eval_score"]; ok {
		t.Errorf("the household's final figures repeat the success rate as a score: %v", want.Final)
	}
	out := t.TempDir()
	got, err := Report(context.Background(), js, "reported", out)
	if err != nil {
		t.Fatal(err)
	}
	if got.Updates != want.Updates || got.EnvSteps != want.EnvSteps || !reflect.DeepEqual(got.Final, want.Final) ||
		got.WallSeconds != want.WallSeconds {
		t.Errorf("rebuilt summary %+v, want the run's %+v", got, want)
	}
	for _, f := range []string{"summary.json", "metrics_update.csv", "report.html", ConfigFile, PolicyFile} {
		if _, err := os.Stat(filepath.Join(out, "reported", "report", f)); err != nil {
			t.Errorf("rebuilt report: %v", err)
		}
	}
	if _, err := Report(context.Background(), js, "no-such-run", out); !errors.Is(err, ErrNoRun) {
		t.Errorf("report of a run that does not exist: got %v, want ErrNoRun", err)
	}
}

// An update redone after a restart past the stream's dedupe window is in
// the stream twice: the report, rebuilt or kept live by a rerun, shows it
// once, with the figures first reported.
func TestReportShowsARedoneUpdateOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	dir := t.TempDir()
	cfg := liveRun(t, "redone", dir, func(*Options) {})
	cfg.NATSURL = s.ClientURL()
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var first *schemas.MetricsEvent
	err := streams.Replay(ctx, js, streams.ReplayOptions{Run: "redone", Subject: "metrics.learner"}, func(m streams.Message) error {
		if m.Metrics != nil && m.Metrics.Kind == "update" && m.Metrics.Update == 2 && first == nil {
			first = m.Metrics
		}
		return nil
	})
	if err != nil || first == nil {
		t.Fatalf("update 2's metrics: %v, %v", first, err)
	}
	redo := *first // the redo, stored past the dedupe window: no message id to drop it by
	redo.Time, redo.Values = redo.Time.Add(time.Hour), map[string]float64{"success_rate": 0.987}
	body, err := schemas.EncodeMetrics(redo)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := streams.Publish(ctx, js, streams.Subjects("redone").Metrics("learner"), body, nats.Header{streams.HeaderRun: {"redone"}}); err != nil {
		t.Fatal(err)
	}
	check := func(how, rdir string) {
		t.Helper()
		rows := reporttest.CSV(t, filepath.Join(rdir, "metrics_update.csv"))
		var updates []string
		for _, r := range rows[1:] {
			updates = append(updates, r[3])
		}
		if !slices.Equal(updates, []string{"1", "2", "3", "4"}) || strings.Contains(strings.Join(rows[2], ","), "0.987") {
			t.Errorf("%s: rows of updates %v (update 2: %v); want 1 to 4 once, update 2 as first reported", how, updates, rows[2])
		}
	}
	rebuilt := filepath.Join(dir, "rebuilt")
	if _, err := Report(ctx, js, "redone", rebuilt); err != nil {
		t.Fatal(err)
	}
	check("rebuilt by rspo report", filepath.Join(rebuilt, "redone", "report"))
	if _, err := Run(ctx, cfg); err != nil { // the finished run reported again: its tables kept live
		t.Fatal(err)
	}
	check("run again", filepath.Join(dir, "redone", "report"))
}
