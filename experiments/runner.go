package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/pipeline"
)

// Runner executes a suite's jobs one after the other.
type Runner struct {
	// DataDir holds every run: DataDir/<suite>/<run>/ is a run's pipeline
	// data directory (store, buffer, report). Required.
	DataDir string
	// Quick selects the suites' quick overrides.
	Quick bool
	// Log receives one line per run started, skipped and finished. Default
	// io.Discard.
	Log io.Writer
	// Logger receives the stages' logs. Default: warnings only, to Log.
	Logger *slog.Logger
	// KeepStores keeps every run's JetStream store and buffer after it
	// finishes. By default they are deleted (a run's store and buffer take
	// hundreds of MB) unless a PRM source or its evaluation still needs the
	// run's recorded streams; the report directory always stays.
	KeepStores bool
	// Only, if set, restricts the runs to these variants (so one suite can
	// be split over several processes sharing DataDir).
	Only []string
	// Progress, if set, is called after every learner update of a run.
	Progress func(Job, learnersvc.Progress)
	// KeepSourcesPerRun makes every run train its built-in PRM source runs
	// in its own store, as `rspo run` does on a fresh data directory,
	// instead of copying the suite's shared ones (see seedSources).
	KeepSourcesPerRun bool
	// Revision names the code that trains the runs (the VCS revision the
	// binary was built from); each run's cost record keeps it, and the page
	// says which revisions a suite's figures come from. Empty: unrecorded.
	Revision string
	// Revisions, if set, restricts Aggregate to the runs trained by these
	// revisions (prefixes of the recorded revision, e.g. a short commit
	// hash): a page of the suites measured at one revision, the runs of
	// older ones left out as if they had not finished.
	Revisions []string
}

// CostFile is the runner's record of a run's cost, beside its report
// directory.
const CostFile = "cost.json"

// Cost is what a run cost, measured by the runner around pipeline.Run.
type Cost struct {
	WallSeconds float64 `json:"wall_seconds"`
	// PeakGoBytes is the most memory the Go runtime held (mapped, not
	// released to the OS) during the run: all stages and the embedded
	// server, one process.
	PeakGoBytes uint64 `json:"peak_go_bytes"`
	// Revision is Runner.Revision when the run was trained.
	Revision string `json:"revision,omitempty"`
	// SharedSources says the run started from a copy of the suite's
	// shared PRM source runs and PRM (seedSources): its wall time holds
	// neither their training nor the PRM's.
	SharedSources bool `json:"shared_sources,omitempty"`
}

// Run executes every job of the suite that has no summary yet.
func (r *Runner) Run(ctx context.Context, s *Suite) error {
	if r.DataDir == "" {
		return fmt.Errorf("%w: runner needs a data directory", ErrSuite)
	}
	jobs, err := s.Jobs(r.Quick)
	if err != nil {
		return err
	}
	for i, j := range jobs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(r.Only) > 0 && !contains(r.Only, j.Variant.Name) {
			continue
		}
		r.logf("[%d/%d] ", i+1, len(jobs))
		if err := r.runJob(ctx, s, j); err != nil {
			return fmt.Errorf("experiments: run %s: %w", j.RunName(), err)
		}
	}
	return nil
}

// RunDir is the pipeline data directory of job j.
func (r *Runner) RunDir(j Job) string { return filepath.Join(r.suiteDir(j.Suite), j.RunName()) }

// ReportDir is the report directory pipeline.Run writes for job j.
func (r *Runner) ReportDir(j Job) string { return filepath.Join(r.RunDir(j), j.RunName(), "report") }

func (r *Runner) suiteDir(suite string) string {
	if r.Quick {
		return filepath.Join(r.DataDir, "quick", suite)
	}
	return filepath.Join(r.DataDir, suite)
}

func (r *Runner) runJob(ctx context.Context, s *Suite, j Job) error {
	if _, err := os.Stat(filepath.Join(r.ReportDir(j), "summary.json")); err == nil {
		r.logf("%s: done before, kept\n", j.RunName())
		return nil
	}
	if j.Variant.PRMFrom != "" {
		path, err := r.ensurePRM(ctx, s, j.Variant.PRMFrom)
		if err != nil {
			return err
		}
		j.Config.PRMFile = path
	}
	cfg, err := pipelineConfig(j.Config, j.RunName(), j.Seed, r.RunDir(j))
	if err != nil {
		return err
	}
	cfg.Logger, cfg.Revision = r.logger(), r.Revision
	shared, err := r.seedSources(ctx, j, cfg)
	if err != nil {
		return err
	}
	if r.Progress != nil {
		cfg.Progress = func(p learnersvc.Progress) { r.Progress(j, p) }
	}
	r.logf("%s: training %d updates\n", j.RunName(), j.Config.Updates)
	sum, cost, err := runMeasured(ctx, cfg)
	if err != nil {
		return err
	}
	cost.Revision, cost.SharedSources = r.Revision, shared
	r.logf("%s: finished in %.0fs, eval success %.3f\n", j.RunName(), cost.WallSeconds, sum.Final["eval_success_rate"])
	if err := writeJSONFile(filepath.Join(r.RunDir(j), CostFile), cost); err != nil {
		return err
	}
	if r.KeepStores || s.streamsNeeded(j.Variant.Name) {
		return nil
	}
	return r.pruneRun(j)
}

// runMeasured runs the pipeline while sampling the runtime's memory.
func runMeasured(ctx context.Context, cfg pipeline.Config) (pipeline.Summary, Cost, error) {
	stop := startMemorySampler(250 * time.Millisecond)
	start := time.Now()
	sum, err := pipeline.Run(ctx, cfg)
	cost := Cost{WallSeconds: time.Since(start).Seconds(), PeakGoBytes: stop()}
	return sum, cost, err
}

func (r *Runner) logger() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.New(slog.NewTextHandler(r.out(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

func (r *Runner) out() io.Writer {
	if r.Log == nil {
		return io.Discard
	}
	return r.Log
}

func (r *Runner) logf(format string, a ...any) { fmt.Fprintf(r.out(), format, a...) }

func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("experiments: %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("experiments: %w", err)
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func readJSONFile(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return errors.Join(ErrResults, fmt.Errorf("%s: %w", path, err))
	}
	return nil
}

// pruneRun deletes a finished run's store and buffer, keeping its report
// and cost record.
func (r *Runner) pruneRun(j Job) error {
	for _, dir := range []string{filepath.Join(r.RunDir(j), "nats"), filepath.Join(r.RunDir(j), j.RunName(), "buffer")} {
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("experiments: prune %s: %w", j.RunName(), err)
		}
	}
	return nil
}
