// Package pipeline runs every stage of an RSPO training run — actors, the
// explorer, the swapper, the buffer and the learner — in one process over
// one NATS server: the embedded one by default, or any server given by URL.
// It is what `rspo run` does, and what experiments call in a loop.
//
// The stages talk only through JetStream, exactly as they do when each runs
// as its own service (`rspo serve STAGE`): running them together changes
// nothing but where the goroutines live.
package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/buffersvc"
	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/producers"
	"github.com/rspo-dev/rspo/report"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/swapper"
)

// Config configures a whole run.
type Config struct {
	// Learner is the run's learner configuration (run name, environment,
	// algorithm, RSPO settings, budgets).
	Learner learnersvc.Config
	// ExplorerMode, PRMNoise and GateAUC configure the explorer (see
	// producers.ExplorerConfig); Learner.Explorer is set from ExplorerMode.
	ExplorerMode producers.ExplorerMode
	PRMNoise     float64
	GateAUC      float64
	// ExploreTilt, when > 0, steers the explorer's rollouts by the PRM at
	// acting time instead of training π_B (producers.ExplorerConfig.Tilt).
	ExploreTilt float64
	// Actors is the number of actor services started. Default 1 (each runs
	// GOMAXPROCS episodes at once).
	Actors int
	// Verify makes the swapper replay every explorer trajectory to check
	// its claimed outcome.
	Verify bool
	// DataDir holds the embedded server's store (DataDir/nats), the buffer
	// (DataDir/<run>/buffer) and the report (DataDir/<run>/report).
	// Default "runs".
	DataDir string
	// NATSURL, when set, uses that server instead of starting one; Connect
	// holds its credentials.
	NATSURL string
	Connect streams.ConnectOptions
	// Settings, when set, are the run's defining options
	// (Options.Settings): recorded on the run's first start, and a later
	// start of the same run name with other settings fails with
	// ErrSettingsChanged instead of resuming a different run.
	Settings map[string]json.RawMessage
	// Progress, if set, is called after every learner update.
	Progress func(learnersvc.Progress)
	// Logger receives every stage's log. Default slog.Default().
	Logger *slog.Logger
}

// Summary is what a finished run reports (summary.json).
type Summary struct {
	Run     string `json:"run"`
	Env     string `json:"env"`
	Algo    string `json:"algo"`
	RSPO    bool   `json:"rspo"`
	Dense   bool   `json:"dense_only"`
	Explore string `json:"explorer,omitempty"`
	Updates int64  `json:"updates"`
	Seed    int64  `json:"seed"`
	// Final holds the final evaluation (per split) from run.finished.
	Final map[string]float64 `json:"final"`
	// EnvSteps counts training environment steps (actors + explorers).
	EnvSteps         int64   `json:"env_steps"`
	EnvStepsActor    int64   `json:"env_steps_actor"`
	EnvStepsExplorer int64   `json:"env_steps_explorer"`
	WallSeconds      float64 `json:"wall_seconds"`
	// PeakRSSBytes is the process's peak resident memory.
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	// ReportDir is where the report files were written.
	ReportDir string `json:"report_dir"`
}

func (c Config) withDefaults() Config {
	if c.DataDir == "" {
		c.DataDir = "runs"
	}
	if c.Actors <= 0 {
		c.Actors = 1
	}
	if c.ExplorerMode == "" {
		c.ExplorerMode = producers.ModePRM
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.Learner.Explorer = c.ExplorerMode
	if c.Learner.Logger == nil {
		c.Learner.Logger = c.Logger
	}
	return c
}

// Validate reports every problem with the configuration.
func (c Config) Validate() error {
	c = c.withDefaults()
	errs := []error{c.Learner.Validate()}
	errs = append(errs, producers.ValidateShaping(c.PRMNoise, c.GateAUC, c.ExploreTilt))
	return errors.Join(errs...)
}

// Run trains to the end (or until ctx ends), then writes the report. A run
// whose name already has a checkpoint in the store resumes.
func Run(ctx context.Context, cfg Config) (Summary, error) {
	if err := cfg.Validate(); err != nil {
		return Summary{}, err
	}
	cfg = cfg.withDefaults()
	start := time.Now()
	nc, js, shutdown, err := connect(ctx, cfg)
	if err != nil {
		return Summary{}, err
	}
	defer shutdown()
	if err := streams.Ensure(ctx, js, streams.Options{}); err != nil {
		return Summary{}, err
	}
	if err := CheckSettings(ctx, js, cfg.Learner.Run, cfg.Settings); err != nil {
		return Summary{}, err
	}
	stages, err := startStages(ctx, nc, js, cfg)
	if err != nil {
		return Summary{}, err
	}
	svc, err := learnersvc.New(nc, js, cfg.Learner)
	if err != nil {
		stages.stop()
		return Summary{}, err
	}
	if cfg.Progress != nil {
		svc.OnProgress(cfg.Progress)
	}
	runErr := svc.Run(ctx)
	if err := stages.stop(); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		return Summary{}, runErr
	}
	return writeReport(context.WithoutCancel(ctx), js, cfg, svc.Checkpoint(), time.Since(start))
}

// connect starts the embedded server or dials the given one.
func connect(ctx context.Context, cfg Config) (*nats.Conn, jetstream.JetStream, func(), error) {
	if cfg.NATSURL != "" {
		nc, js, err := streams.Connect(ctx, cfg.NATSURL, cfg.Connect)
		if err != nil {
			return nil, nil, nil, err
		}
		return nc, js, func() { drain(nc) }, nil
	}
	emb, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: filepath.Join(cfg.DataDir, "nats"), Port: -1})
	if err != nil {
		return nil, nil, nil, err
	}
	nc, js, err := emb.Connect(ctx, "rspo-run")
	if err != nil {
		emb.Shutdown()
		return nil, nil, nil, err
	}
	return nc, js, func() { drain(nc); emb.Shutdown() }, nil
}

// drain drains nc and waits (a few seconds at most) until it is closed, so
// the server is not shut down under a connection still flushing.
func drain(nc *nats.Conn) {
	if err := nc.Drain(); err != nil {
		nc.Close()
		return
	}
	deadline := time.Now().Add(5 * time.Second)
	for !nc.IsClosed() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	nc.Close()
}

// stages are the background services of a run.
type stages struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	errs   []error
	close  []func() error
}

func (s *stages) start(ctx context.Context, name string, run func(context.Context) error) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := run(ctx); err != nil && ctx.Err() == nil {
			s.mu.Lock()
			s.errs = append(s.errs, fmt.Errorf("pipeline: %s stopped: %w", name, err))
			s.mu.Unlock()
		}
	}()
}

// stop ends every stage, waits for them to drain and returns their errors.
func (s *stages) stop() error {
	s.cancel()
	s.wg.Wait()
	for _, c := range s.close {
		if err := c(); err != nil {
			s.errs = append(s.errs, err)
		}
	}
	return errors.Join(s.errs...)
}

// startStages starts actors and, with RSPO, the explorer, swapper and buffer.
func startStages(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, cfg Config) (*stages, error) {
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	st := &stages{cancel: cancel}
	run := cfg.Learner.Run
	for i := 0; i < cfg.Actors; i++ {
		a, err := producers.NewActor(js, producers.ActorConfig{Run: run, Name: fmt.Sprintf("actor-%d", i), Logger: cfg.Logger,
			Parallel: runtime.GOMAXPROCS(0)})
		if err != nil {
			st.stop()
			return nil, err
		}
		st.start(sctx, "actor", a.Run)
	}
	if !cfg.Learner.RSPO {
		return st, nil
	}
	lc := cfg.Learner.WithDefaults()
	x, err := producers.NewExplorer(js, producers.ExplorerConfig{Run: run, Name: "explorer-0", Mode: cfg.ExplorerMode,
		Trainer: lc.Trainer, PRMNoise: cfg.PRMNoise, GateAUC: cfg.GateAUC, Tilt: cfg.ExploreTilt, Logger: cfg.Logger})
	if err != nil {
		st.stop()
		return nil, err
	}
	st.start(sctx, "explorer", x.Run)
	sw, err := swapper.New(js, swapper.Config{Run: run, Verify: cfg.Verify, EnvOptions: lc.EnvOptions, Logger: cfg.Logger})
	if err != nil {
		st.stop()
		return nil, err
	}
	st.start(sctx, "swapper", sw.Run)
	store, err := buffersvc.Open(filepath.Join(cfg.DataDir, run, "buffer"), buffersvc.Options{})
	if err != nil {
		st.stop()
		return nil, err
	}
	st.close = append(st.close, store.Close)
	buf, err := buffersvc.NewService(nc, js, store, buffersvc.Config{Run: run, Logger: cfg.Logger})
	if err != nil {
		st.stop()
		return nil, err
	}
	st.start(sctx, "buffer", buf.Run)
	return st, nil
}

// writeReport replays the run's metrics and writes the report directory.
func writeReport(ctx context.Context, js jetstream.JetStream, cfg Config, cp learnersvc.Checkpoint, wall time.Duration) (Summary, error) {
	lc := cfg.Learner.WithDefaults()
	sum := Summary{Run: lc.Run, Env: lc.Env, Algo: string(lc.Trainer.Algo), RSPO: lc.RSPO, Dense: lc.DenseOnly,
		Updates: cp.Update, Seed: lc.Seed, EnvStepsActor: cp.EnvStepsActor, EnvStepsExplorer: cp.EnvStepsExplorer,
		EnvSteps: cp.EnvStepsActor + cp.EnvStepsExplorer, WallSeconds: wall.Seconds(), PeakRSSBytes: peakRSS(),
		ReportDir: filepath.Join(cfg.DataDir, lc.Run, "report")}
	if lc.RSPO {
		sum.Explore = string(cfg.ExplorerMode)
	}
	var events []schemas.MetricsEvent
	err := streams.Replay(ctx, js, streams.ReplayOptions{Run: lc.Run, Subject: "metrics"}, func(m streams.Message) error {
		if m.Metrics != nil {
			events = append(events, *m.Metrics)
		}
		return nil
	})
	if err != nil {
		return sum, err
	}
	err = streams.Replay(ctx, js, streams.ReplayOptions{Run: lc.Run, Subject: "ctrl.run.finished"}, func(m streams.Message) error {
		if m.Event != nil {
			sum.Final = m.Event.Metrics
		}
		return nil
	})
	if err != nil {
		return sum, err
	}
	if _, err = report.Write(sum.ReportDir, events, sum); err != nil {
		return sum, err
	}
	return sum, exportPolicy(ctx, js, lc.Run, cp.Version, filepath.Join(sum.ReportDir, PolicyFile))
}

// PolicyFile is the name of the final policy's snapshot in the report
// directory; `rspo eval --policy` loads it.
const PolicyFile = "policy.rspo"

// exportPolicy copies policy version v of run from the object store to path.
func exportPolicy(ctx context.Context, js jetstream.JetStream, run string, v int64, path string) error {
	b, err := streams.GetSnapshot(ctx, js, streams.BucketPolicy, streams.PolicyObject(run, v))
	if err != nil {
		return fmt.Errorf("pipeline: final policy: %w", err)
	}
	return os.WriteFile(path, b, 0o644)
}

// peakRSS is the process's peak resident set size in bytes (0 if unknown).
func peakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return int64(ru.Maxrss) * 1024 // Linux reports kilobytes
}
