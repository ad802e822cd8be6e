package pipeline

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rspo-dev/rspo/buffersvc"
	_ "github.com/rspo-dev/rspo/envs/household"
	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// smallRun is a short RSPO+GRPO run on the easy household preset.
func smallRun(t *testing.T, dir string, rspo bool) Config {
	t.Helper()
	return Config{
		DataDir: dir,
		Logger:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Learner: learnersvc.Config{
			Run: "t1", Env: "household", EnvOptions: map[string]string{"preset": "easy"},
			Updates: 4, Tasks: 4, GroupSize: 4, K: 2, RSPO: rspo, Seed: 3,
			PRMWarmupTasks: 8, EvalEpisodes: 8, EvalEvery: 2,
			RolloutTimeout: time.Minute, ExploreTimeout: time.Minute,
		},
	}
}

func TestRSPORunEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	dir := t.TempDir()
	cfg := smallRun(t, dir, true)
	cfg.Learner.Trainer.Alpha = 0.25
	var updates []int64
	cfg.Progress = func(p learnersvc.Progress) { updates = append(updates, p.Update) }
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(updates), 4; got != want {
		t.Fatalf("progress reports: got %d, want %d", got, want)
	}
	if sum.Updates != 4 || sum.EnvStepsActor == 0 || sum.EnvStepsExplorer == 0 || len(sum.ShortCycles) > 0 {
		t.Errorf("summary: %+v", sum)
	}
	if _, ok := sum.Final["eval_success_rate"]; !ok {
		t.Errorf("final eval missing: %v", sum.Final)
	}
	for _, f := range []string{"summary.json", PolicyFile, "metrics.jsonl", "metrics_update.csv", "metrics_eval.csv", "eval_success_vs_update.png"} {
		if _, err := os.Stat(filepath.Join(sum.ReportDir, f)); err != nil {
			t.Errorf("report file: %v", err)
		}
	}
	// The streams hold what every stage did.
	js := openStore(t, dir)
	counts := map[string]int{}
	for _, subj := range []streams.SubjectKind{"traj.onpolicy", "traj.explore", "swapped", "ctrl"} {
		err := streams.Replay(context.Background(), js, streams.ReplayOptions{Run: "t1", Subject: subj}, func(m streams.Message) error {
			if m.Event != nil {
				counts[string(m.Event.Type)]++
			} else {
				counts[string(subj)]++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"traj.onpolicy", "traj.explore", "swapped", string(schemas.EventCycleStarted),
		string(schemas.EventCycleExplored), string(schemas.EventCycleEnded), string(schemas.EventPolicyPublished),
		string(schemas.EventRunFinished)} {
		if counts[k] == 0 {
			t.Errorf("nothing on %s; counts %v", k, counts)
		}
	}
	if got, want := counts[string(schemas.EventCycleEnded)], 2; got != want {
		t.Errorf("cycle.ended events: got %d, want %d", got, want)
	}
	if got, want := counts[string(schemas.EventPolicyPublished)], 5; got != want {
		t.Errorf("policy.published events: got %d, want %d (v0 + 4 updates)", got, want)
	}
	if counts["traj.explore"] != counts["swapped"] {
		t.Errorf("explore %d vs swapped %d: every explorer trajectory should be swapped", counts["traj.explore"], counts["swapped"])
	}
	// The buffer cleared every ended cycle.
	store, err := buffersvc.Open(filepath.Join(dir, "t1", "buffer"), buffersvc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	st, err := store.Stats("t1")
	if err != nil {
		t.Fatal(err)
	}
	if st.Records != 0 {
		t.Errorf("buffer holds %d records after the last cycle ended, want 0", st.Records)
	}
}

// An interrupted run, resumed, ends with exactly the policy of a run that
// was never interrupted: every id, seed and optimiser state is restored.
func TestInterruptedRunResumesToTheSamePolicy(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	whole := smallRun(t, t.TempDir(), true)
	whole.Learner.Trainer.Alpha = 0.25
	sumWhole, err := Run(context.Background(), whole)
	if err != nil {
		t.Fatal(err)
	}

	parts := smallRun(t, t.TempDir(), true)
	parts.Learner.Trainer.Alpha = 0.25
	sumParts := runInterrupted(t, parts, 3)
	sameRun(t, sumWhole, sumParts, "resumed run's")
}

// sameRun fails t unless the resumed run (parts) trained the uninterrupted
// run's (whole) final policy, byte for byte, in as many environment steps.
func sameRun(t *testing.T, whole, parts Summary, what string) {
	t.Helper()
	a, err := os.ReadFile(filepath.Join(whole.ReportDir, PolicyFile))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(parts.ReportDir, PolicyFile))
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Errorf("%s final policy differs from the uninterrupted run's", what)
	}
	if whole.EnvSteps != parts.EnvSteps {
		t.Errorf("environment steps: whole %d, resumed %d", whole.EnvSteps, parts.EnvSteps)
	}
}

// runInterrupted runs cfg, stops it once update `at` is done, runs it again
// to the end (a resume) and returns the resumed run's summary.
func runInterrupted(t *testing.T, cfg Config, at int64) Summary {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg.Progress = func(p learnersvc.Progress) {
		if p.Update == at {
			cancel()
		}
	}
	if _, err := Run(ctx, cfg); err == nil {
		t.Fatal("interrupted run reported success")
	}
	cfg.Progress = nil
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// openStore serves a finished in-process run's store (dir/nats) again and
// returns a JetStream connection to it, to check what the streams hold.
func openStore(t *testing.T, dir string) jetstream.JetStream {
	t.Helper()
	emb, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: filepath.Join(dir, "nats"), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Shutdown)
	nc, js, err := emb.Connect(context.Background(), "check")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return js
}

// A run that refreshes its PRM with an epoch budget, interrupted between
// refreshes and resumed, ends with the policy of the uninterrupted run:
// the resumed learner's refresher continues from the stored PRM version
// on the same window.
func TestInterruptedRefreshRunResumesToTheSamePolicy(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	cfg := func() Config {
		c := smallRun(t, t.TempDir(), true)
		c.Learner.Trainer.Alpha = 0.25
		c.Learner.Updates = 6
		c.Learner.PRMRefresh, c.Learner.PRMRefreshEpochs = true, 3
		return c
	}
	sumWhole, err := Run(context.Background(), cfg())
	if err != nil {
		t.Fatal(err)
	}
	sumParts := runInterrupted(t, cfg(), 3)
	sameRun(t, sumWhole, sumParts, "resumed refreshing run's")
}

// A PRM warm-up that sees no success trains a PRM that scores everything
// ~0; the run says so, and a warm-up with successes does not.
func TestPRMWarmupWithoutSuccessesWarns(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	for _, tt := range []struct {
		preset string
		warn   bool
	}{{"alfworld", true}, {"easy", false}} {
		cfg := smallRun(t, t.TempDir(), true)
		cfg.Learner.Updates, cfg.Learner.EnvOptions = 1, map[string]string{"preset": tt.preset}
		var logs bytes.Buffer
		cfg.Logger = slog.New(slog.NewTextHandler(&syncWriter{w: &logs}, &slog.HandlerOptions{Level: slog.LevelWarn}))
		if _, err := Run(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(logs.String(), "PRM warm-up saw no successes"); got != tt.warn {
			t.Errorf("%s preset: warned %v, want %v; log:\n%s", tt.preset, got, tt.warn, logs.String())
		}
	}
}

// A run that targets its exploration and its buffer records at failing
// groups, interrupted and resumed, ends with the uninterrupted run's
// policy: the counts the next cycle's plan comes from are checkpointed.
func TestInterruptedTargetedRunResumesToTheSamePolicy(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	target := func(cfg Config) Config {
		cfg.Learner.Trainer.Alpha = 0.25
		cfg.Learner.ExploreTarget, cfg.Learner.OffTarget = learnersvc.ExploreTargetFailing, learnersvc.OffTargetFailing
		cfg.Learner.Updates = 6
		return cfg
	}
	whole := target(smallRun(t, t.TempDir(), true))
	sumWhole, err := Run(context.Background(), whole)
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, sumWhole, runInterrupted(t, target(smallRun(t, t.TempDir(), true)), 3), "resumed targeted run's")
}
