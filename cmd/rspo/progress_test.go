package main

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/pipeline"
	"github.com/rspo-dev/rspo/prm"
)

func TestProgressLines(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type report struct {
		at    time.Duration
		phase bool // a phase report, not an update's
		p     learnersvc.Progress
	}
	tests := []struct {
		name    string
		reports []report
		want    []string
		notWant []string
	}{
		{"fresh run with a PRM warm-up", []report{
			{0, true, learnersvc.Progress{Phase: learnersvc.PhasePRMWarmup, Updates: 30, Cycle: 0}},
			{10 * time.Second, false, learnersvc.Progress{Update: 1, Updates: 30, Cycle: 0, SuccessRate: 0.25, EvalSuccess: -1, EnvSteps: 1000}},
		}, []string{"PRM warm-up\n", "update 1/30  cycle 0  train success 0.250  env steps 1000  100 steps/s  ETA 4m50s"}, []string{"resuming"}},
		{"resumed run counts from where it resumed", []report{
			{0, true, learnersvc.Progress{Phase: learnersvc.PhaseResumed, Update: 5, Updates: 30, Cycle: -1, EnvSteps: 5000}},
			{2 * time.Second, false, learnersvc.Progress{Update: 6, Updates: 30, Cycle: -1, EvalSuccess: 0.5, EnvSteps: 5400}},
		}, []string{"resuming from update 5/30\n", "update 6/30  train success 0.000  eval success 0.500  env steps 5400  200 steps/s  ETA 48s"}, []string{"cycle"}},
		{"last update has no ETA", []report{
			{0, true, learnersvc.Progress{Phase: learnersvc.PhaseUpdating, Updates: 1, Cycle: -1}},
			{time.Second, false, learnersvc.Progress{Update: 1, Updates: 1, Cycle: -1, EvalSuccess: -1, EnvSteps: 50}},
		}, []string{"update 1/1  train success 0.000  env steps 50  50 steps/s\n"}, []string{"ETA"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			p := newProgress(&b)
			now := t0
			p.now = func() time.Time { return now }
			for _, r := range tt.reports {
				now = t0.Add(r.at)
				if r.phase {
					p.phase(r.p)
				} else {
					p.update(r.p)
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output %q lacks %q", b.String(), w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(b.String(), w) {
					t.Errorf("output %q has %q", b.String(), w)
				}
			}
		})
	}
}

// The terminal's bar shows one estimate of the time left, the
// description's (from this process's updates), not a second of its own:
// after a resume the bar's own would count the updates resumed from.
func TestProgressBarShowsOneETA(t *testing.T) {
	var b bytes.Buffer
	p := &progress{w: &b, now: time.Now, eval: -1, bar: newBar(&b)}
	t0 := time.Now()
	p.now = func() time.Time { return t0 }
	p.phase(learnersvc.Progress{Phase: learnersvc.PhaseResumed, Update: 20, Updates: 30, Cycle: -1, EnvSteps: 5000})
	p.now = func() time.Time { return t0.Add(10 * time.Second) }
	p.update(learnersvc.Progress{Update: 21, Updates: 30, Cycle: -1, EvalSuccess: -1, EnvSteps: 5400})
	out := b.String()
	if !strings.Contains(out, "ETA 1m30s") {
		t.Errorf("bar %q lacks the description's ETA 1m30s", out)
	}
	if regexp.MustCompile(`\[[0-9hms.]+:[0-9hms.]+\]`).MatchString(out) {
		t.Errorf("bar %q shows a second estimate [elapsed:left]", out)
	}
}

func TestInterruptedSaysHowToResume(t *testing.T) {
	err := error(interrupted{run: "r1"})
	if !errors.Is(err, context.Canceled) {
		t.Error("an interrupted run must exit as cancelled (status 130)")
	}
	if strings.Contains(err.Error(), "context canceled") || !strings.Contains(err.Error(), "resume run r1") {
		t.Errorf("message %q", err)
	}
}

// An in-process RSPO run reports its warm-up, environment steps and rates.
func TestRunProgressShowsPhaseAndSteps(t *testing.T) {
	_, stderr, err := runRspo(testContext(t), "run", "--data", t.TempDir(), "--run", "progress", "--env-opt", "preset=easy",
		"--updates", "1", "--tasks", "4", "--group", "2", "--k", "1", "--eval-episodes", "2", "--prm-warmup-tasks", "3",
		"--recipe", "paper") // the paper's recipe warms its PRM up on its own rollouts
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, w := range []string{"PRM warm-up\n", "update 1/1  cycle 0", "env steps ", " steps/s"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
}

// A source run's progress, off a terminal, prints every tenth update and
// the last; the run's own progress prints every update.
func TestSourceProgressPrintsEveryTenth(t *testing.T) {
	var b strings.Builder
	p := newProgress(&b)
	p.every, p.prefix = sourceProgressEvery, "  source "
	for u := int64(1); u <= 25; u++ {
		p.update(learnersvc.Progress{Update: u, Updates: 25, Cycle: -1, EvalSuccess: -1})
	}
	var got []string
	for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		if !strings.HasPrefix(l, "  source update ") {
			t.Errorf("line %q does not say it is a source run's", l)
		}
		got = append(got, strings.Fields(l)[2])
	}
	if want := []string{"10/25", "20/25", "25/25"}; !slices.Equal(got, want) {
		t.Errorf("printed updates %v, want %v:\n%s", got, want, b.String())
	}
}

// The source PRM's training prints a line every tenth epoch and at the
// epoch it stops, naming the epoch it keeps.
func TestPRMEpochLines(t *testing.T) {
	var lines []string
	for e := 1; e <= 33; e++ {
		best := min(e, 13)
		if line, ok := prmEpochLine(prm.EpochProgress{Epoch: e, MaxEpochs: 500, Loss: 0.2, BestLoss: 0.1, BestEpoch: best, Patience: 20, Last: e == 33}); ok {
			lines = append(lines, line)
		}
	}
	want := []string{
		"  PRM epoch 10: held-out loss 0.2000, best 0.1000 at epoch 10 (stops after 20 epochs without a better one)",
		"  PRM epoch 20: held-out loss 0.2000, best 0.1000 at epoch 13 (stops after 20 epochs without a better one)",
		"  PRM epoch 30: held-out loss 0.2000, best 0.1000 at epoch 13 (stops after 20 epochs without a better one)",
		"  PRM epoch 33: held-out loss 0.2000, best 0.1000 at epoch 13; done, keeping epoch 13",
	}
	if !slices.Equal(lines, want) {
		t.Errorf("got lines\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// The hooks of rspo run, called in the order a first run with two source
// stages calls them, print each source run's updates — the second stage
// announced after its own PRM's training — each PRM's epochs, then the
// run's own.
func TestReportProgressThroughTheSourceRuns(t *testing.T) {
	var b strings.Builder
	cfg := pipeline.Config{SourceRuns: make([]pipeline.Config, 3)}
	done := reportProgress(&b, &cfg)
	updates := func(n int64) {
		for u := int64(1); u <= n; u++ {
			cfg.SourceProgress(learnersvc.Progress{Update: u, Updates: n, Cycle: -1, EvalSuccess: -1})
		}
	}
	epochs := func() {
		for e := 1; e <= 25; e++ {
			cfg.OnPRMEpoch(prm.EpochProgress{Epoch: e, MaxEpochs: 500, BestEpoch: 5, Patience: 20, Last: e == 25})
		}
	}
	cfg.OnSource("s1", 1, 3)
	updates(20)
	cfg.OnSource("s2", 2, 3)
	cfg.OnStaleSource("s2", []string{"0123456789abcdef0123"})
	updates(20)
	cfg.OnSourcePRM(64)
	epochs()
	cfg.OnSource("s3", 3, 3)
	updates(20)
	cfg.OnSourcePRM(200)
	epochs()
	cfg.Phase(learnersvc.Progress{Phase: learnersvc.PhaseExploring, Updates: 2})
	cfg.Progress(learnersvc.Progress{Update: 1, Updates: 2, EvalSuccess: -1})
	done()
	// Each line's kind, by the first prefix it has (the more specific first).
	prefixes := []struct{ prefix, kind string }{
		{"rspo: PRM source run", "run"}, {"  source update 20/20", "source-done"}, {"  source update", "source"},
		{"rspo: warning: this source run was recorded by rspo 0123456789ab, not by this build", "stale"}, {"rspo: training the PRM", "prm"}, {"  PRM epoch 25:", "prm-done"}, {"  PRM epoch", "epoch"}, {"update 1/2", "update"},
	}
	var kinds []string
	for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		i := slices.IndexFunc(prefixes, func(p struct{ prefix, kind string }) bool { return strings.HasPrefix(l, p.prefix) })
		if i < 0 {
			t.Errorf("unexpected line %q", l)
			continue
		}
		kinds = append(kinds, prefixes[i].kind)
	}
	want := []string{"run", "source", "source-done", "run", "stale", "source", "source-done",
		"prm", "epoch", "epoch", "prm-done", "run", "source", "source-done", "prm", "epoch", "epoch", "prm-done", "update"}
	if !slices.Equal(kinds, want) {
		t.Errorf("lines\n%s\nread as %v, want %v", b.String(), kinds, want)
	}
}

// The warning for a source run recorded by other code names its
// revisions, short, and says how to record it again.
func TestStaleSourceLine(t *testing.T) {
	for _, c := range []struct {
		by   []string
		want string
	}{
		{[]string{"aaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbb-modified"}, "recorded by rspo aaaaaaaaaaaa, bbbbbbbbbbbb-modified, not by this build (cccccccccccc)"},
		{nil, "recorded by an rspo that did not record its revision, not by this build (cccccccccccc)"},
	} {
		line := staleSourceLine("cccccccccccccccccccc", c.by)
		if !strings.Contains(line, c.want) || !strings.Contains(line, "give --data a new directory") {
			t.Errorf("recorded by %v: %q, want it to say %q and how to record them again", c.by, line, c.want)
		}
	}
}
