package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

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
