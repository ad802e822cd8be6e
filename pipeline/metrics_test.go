package pipeline

import (
	"context"
	"net/http"
	"testing"

	"github.com/prometheus/common/expfmt"

	"github.com/rspo-dev/rspo/metrics"
)

// scrapeStage fetches url and returns every counter, gauge and histogram
// (its sample count) by family name, then by the stage label ("" for none).
func scrapeStage(t *testing.T, url string) map[string]map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]float64{}
	for name, f := range fams {
		out[name] = map[string]float64{}
		for _, m := range f.GetMetric() {
			stage := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "stage" {
					stage = l.GetValue()
				}
			}
			switch {
			case m.Counter != nil:
				out[name][stage] = m.GetCounter().GetValue()
			case m.Gauge != nil:
				out[name][stage] = m.GetGauge().GetValue()
			case m.Histogram != nil:
				out[name][stage] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

func TestRunServesMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	cfg := smallRun(t, t.TempDir(), true)
	cfg.Metrics = metrics.New(cfg.Learner.Run)
	srv, err := metrics.Listen("127.0.0.1:0", cfg.Metrics)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := scrapeStage(t, srv.URL())
	for _, tc := range []struct {
		name, stage string
		want        float64 // exact, or at least 1 when 0
	}{
		{"rspo_learner_update", "", float64(sum.Updates)},
		{"rspo_learner_env_steps", "", float64(sum.EnvSteps)},
		{"rspo_learner_policy_version", "", 0},
		{"rspo_stage_messages_handled_total", StageActor, 0},
		{"rspo_stage_messages_handled_total", StageExplorer, 0},
		{"rspo_stage_messages_handled_total", StageSwapper, 0},
		{"rspo_stage_messages_handled_total", StageBuffer, 0},
		{"rspo_buffer_sample_seconds", "", 0},
	} {
		v, ok := got[tc.name][tc.stage]
		switch {
		case !ok:
			t.Errorf("%s{stage=%q} missing", tc.name, tc.stage)
		case tc.want == 0 && v < 1, tc.want != 0 && v != tc.want:
			t.Errorf("%s{stage=%q} = %v, want %v (0: at least 1)", tc.name, tc.stage, v, tc.want)
		}
	}
	if d := got["rspo_stage_messages_dead_lettered_total"][StageSwapper]; d != 0 {
		t.Errorf("swapper dead-lettered %v messages of a clean run", d)
	}
}
