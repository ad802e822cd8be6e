package pipeline

import (
	"context"
	"testing"

	"github.com/rspo-dev/rspo/metrics/metricstest"

	"github.com/rspo-dev/rspo/metrics"
)

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
	got := metricstest.Scrape(t, srv.URL(), "stage")
	for _, tc := range []struct {
		name, stage string
		want        float64 // exact, or at least 1 when 0
	}{
		{"rspo_learner_updates_total", "", float64(sum.Updates)},
		{"rspo_learner_env_steps_total", "", float64(sum.EnvSteps)},
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
