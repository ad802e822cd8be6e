package metrics_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/metrics/metricstest"

	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/metrics"
)

func TestServedMetrics(t *testing.T) {
	m := metrics.New("r1")
	srv, err := metrics.Listen("127.0.0.1:0", m)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	actor, swapper := m.Stage("actor"), m.Stage("swapper")
	actor.Handled()
	actor.Handled()
	actor.Retried()
	swapper.DeadLettered()
	m.ObserveSample(3*time.Millisecond, nil)
	m.ObserveSample(time.Second, errors.New("no buffer"))
	m.ObserveScore(time.Millisecond, 5)
	m.Learner(learnersvc.Progress{Update: 7, Updates: 30, Version: 7, SuccessRate: 0.5, EvalSuccess: 0.25, EnvSteps: 900})
	m.Learner(learnersvc.Progress{Update: 8, Updates: 30, Version: 8, SuccessRate: -1, EvalSuccess: -1, EnvSteps: 950,
		VersionLagMax: 1, StaleRefused: 2, Refused: 4, ShortCycles: 3})
	m.Learner(learnersvc.Progress{Update: 8, Updates: 30, Version: 8, SuccessRate: -1, EvalSuccess: -1, EnvSteps: 950,
		Phase: learnersvc.PhaseUpdating}) // a phase report leaves the update's figures
	got := metricstest.Scrape(t, srv.URL(), "stage")
	for _, tc := range []struct {
		name, stage string
		want        float64
	}{
		{"rspo_stage_messages_handled_total", "actor", 2},
		{"rspo_stage_messages_retried_total", "actor", 1},
		{"rspo_stage_messages_dead_lettered_total", "actor", 0},
		{"rspo_stage_messages_dead_lettered_total", "swapper", 1},
		{"rspo_buffer_sample_seconds", "", 2},
		{"rspo_buffer_sample_errors_total", "", 1},
		{"rspo_prm_score_seconds", "", 1},
		{"rspo_prm_scored_trajectories_total", "", 5},
		{"rspo_learner_updates_total", "", 8},
		{"rspo_learner_updates_planned", "", 30},
		{"rspo_learner_policy_version", "", 8},
		{"rspo_learner_train_success_rate", "", 0.5}, // -1 means none: the last rate stays
		{"rspo_learner_eval_success_rate", "", 0.25},
		{"rspo_learner_env_steps_total", "", 950},
		{"rspo_learner_version_lag", "", 1},
		{"rspo_learner_stale_refused_total", "", 2},
		{"rspo_learner_refused_trajectories_total", "", 4},
		{"rspo_learner_short_cycles_total", "", 3},
	} {
		v, ok := got[tc.name][tc.stage]
		if !ok || v != tc.want {
			t.Errorf("%s{stage=%q}: got %v (present %v), want %v", tc.name, tc.stage, v, ok, tc.want)
		}
	}
	if _, ok := got["process_resident_memory_bytes"]; !ok {
		t.Error("process metrics missing")
	}
}

// A count that only grows is a counter named _total, and only such a
// count: Prometheus' rate() and increase() need the type.
func TestRunningCountsAreCounters(t *testing.T) {
	m := metrics.New("r1")
	m.Stage("actor")
	m.Learner(learnersvc.Progress{Update: 5, Updates: 30, Version: 5, EnvSteps: 500, SuccessRate: -1, EvalSuccess: -1}) // resumed at 5
	m.Learner(learnersvc.Progress{Update: 6, Updates: 30, Version: 6, EnvSteps: 620, SuccessRate: 0.5, EvalSuccess: -1,
		Phase: learnersvc.PhaseUpdated, StaleRefused: 1, ShortCycles: 1})
	fams, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	counters := map[string]float64{}
	for _, f := range fams {
		if !strings.HasPrefix(f.GetName(), "rspo_") {
			continue
		}
		isCounter := f.GetType().String() == "COUNTER"
		if isCounter != strings.HasSuffix(f.GetName(), "_total") {
			t.Errorf("%s is a %v", f.GetName(), f.GetType())
		}
		if isCounter && len(f.GetMetric()) == 1 {
			counters[f.GetName()] = f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	for name, want := range map[string]float64{"rspo_learner_updates_total": 6, "rspo_learner_env_steps_total": 620,
		"rspo_learner_stale_refused_total": 1, "rspo_learner_short_cycles_total": 1} {
		if got, ok := counters[name]; !ok || got != want {
			t.Errorf("counter %s = %v (present %v), want %v", name, got, ok, want)
		}
	}
}

func TestListenBadAddress(t *testing.T) {
	for _, addr := range []string{"", "127.0.0.1", "127.0.0.1:http-ish", "127.0.0.1:99999"} {
		if srv, err := metrics.Listen(addr, metrics.New("r1")); err == nil {
			srv.Close()
			t.Errorf("Listen(%q) succeeded, want an error", addr)
		}
	}
}
