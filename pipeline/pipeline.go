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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/buffersvc"
	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/learner/trainersvc"
	"github.com/rspo-dev/rspo/metrics"
	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/prm/prmsvc"
	"github.com/rspo-dev/rspo/producers"
	"github.com/rspo-dev/rspo/report"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/swapper/swappersvc"
)

// Config configures a run: every stage's settings, from which the stage
// table builds the stages (all of them for Run, one for Serve).
type Config struct {
	// Learner is the run's learner configuration (run name, environment,
	// algorithm, RSPO and explorer settings, budgets). Its Run names the
	// run for every stage. The explorer's settings travel to the explorer
	// in every cycle's plan.
	Learner learnersvc.Config
	// Actor configures the actors (Run and Logger are set from this
	// configuration). In-process actors are named "<Name or actor>-<i>".
	Actor producers.ActorConfig
	// Policy says what plays π_θ in the actors, the learner's evaluations
	// and the explorers' tilted and frozen cycles: the built-in policy
	// (default) or one behind an OpenAI-compatible server.
	Policy PolicyConfig
	// Actors is the number of actor stages Run starts. Default 1 (each
	// runs Actor.Parallel, by default GOMAXPROCS, episodes at once).
	Actors int
	// Explorer, Swapper and Buffer configure those stages (Run and Logger
	// are set from this configuration).
	Explorer producers.ExplorerConfig
	Swapper  swappersvc.Config
	Buffer   BufferConfig
	// Trainer configures the reference external trainer, which an
	// in-process run starts when Learner.TrainerMode is external (Run and
	// Logger are set from this configuration).
	Trainer trainersvc.Config
	// PRM configures the optional PRM scoring stage; an in-process run
	// starts it only when it names a model.
	PRM PRMConfig
	// DataDir holds the embedded server's store (DataDir/nats), the buffer
	// (DataDir/<run>/buffer unless Buffer.Dir is set) and the report
	// (DataDir/<run>/report). Default "runs".
	DataDir string
	// NATSURL, when set, uses that server instead of starting one; Connect
	// holds its credentials. Serve needs it.
	NATSURL string
	Connect streams.ConnectOptions
	// SyncAlways makes the embedded server fsync every write before
	// acknowledging it (unused with NATSURL).
	SyncAlways bool
	// Streams sizes the streams and buckets every stage ensures at start
	// (e.g. Replicas on a JetStream cluster). The zero value leaves the
	// existing ones as they are.
	Streams streams.Options
	// Settings, when set, are the run's defining options
	// (Options.Settings): recorded on the run's first start, and a later
	// start of the same run name with other settings fails with
	// ErrSettingsChanged instead of resuming a different run.
	Settings map[string]json.RawMessage
	// Sources are recorded runs whose trajectories a step-target PRM is
	// trained on before a new run starts (when Learner.PRM is nil; once
	// per provenance, then loaded from the PRM object store: see
	// SourcePRMSeed and SourcePRMProvenance), and
	// SourceRuns the built-in ones among them, trained first if they have
	// not finished (Options.SourceRuns). OnSource, if set, is told as
	// each source run starts, and OnSourcePRM as the PRM's training on
	// their trajectories starts (not when a stored one is reused).
	// OnSource is told where the source run's own work starts: after its
	// own source runs and the PRM it trains on them (OnStarting).
	Sources     []string
	SourceRuns  []Config
	OnSource    func(run string, i, n int)
	OnSourcePRM func(trajectories int)
	// OnStarting, if set, is told once Run has all it needs to start the
	// stages (its source runs trained, its PRM ready), just before it
	// starts them.
	OnStarting func()
	// OnStaleSource, if set, is told of each built-in source run that an
	// earlier process recorded with code other than Revision (recordedBy
	// lists the revisions that ran it; empty when none was recorded): it
	// is reused as recorded, so a change of the code since (a new state
	// key, another featurizer) does not reach the PRM this run trains on.
	// It is not called when Revision is empty.
	OnStaleSource func(run string, recordedBy []string)
	// Revision names the code that runs (the VCS revision rspo was built
	// from); it is recorded with the run's cost (Summary.Revisions), and
	// the built-in source runs are given it too. Empty: unrecorded.
	Revision string
	// OnPRMEpoch, if set, hears every epoch of that training (also a
	// built-in source run's own, the second stage's), and SourceProgress
	// every update of the built-in source runs: without them a first run
	// says nothing for the minutes its source runs and PRM take.
	OnPRMEpoch     func(prm.EpochProgress)
	SourceProgress func(learnersvc.Progress)
	// Extra are stages of the user's own that Run starts beside the
	// built-in ones and stops once the learner has finished.
	Extra []StageFunc
	// Progress, if set, is called after every learner update.
	Progress func(learnersvc.Progress)
	// Phase, if set, is called when the learner starts a phase of its
	// work (learnersvc.Service.OnPhase).
	Phase func(learnersvc.Progress)
	// Metrics, if set, collects what the stages do (package metrics); the
	// caller serves it (metrics.Listen).
	Metrics *metrics.Metrics
	// Logger receives every stage's log. Default slog.Default().
	Logger *slog.Logger
	// Options, when set, are the options the configuration was made from
	// (Options.Config sets them); the report saves their effective form as
	// config.yaml.
	Options *Options
	// InitPolicy, when set, is the policy a new run starts from instead of
	// a fresh one — π_θ's version 0 and the reference policy: a snapshot
	// file or run:NAME, the final policy of a finished run on the same
	// server. It is resolved before the run writes anything (a missing or
	// unreadable source fails, ErrInitPolicy) and its hash recorded with
	// the run's settings.
	InitPolicy string
	// initPolicy is what InitPolicy resolved to, for the summary.
	initPolicy *InitPolicy
	// OnInitPolicy, if set, is told what a run with InitPolicy starts
	// from, once it is settled (resolved for a new run, read back for a
	// resumed one).
	OnInitPolicy func(InitPolicy)

	// lease is the run's learner lease Run took before starting the
	// stages; its learner trains under it.
	lease *learnersvc.Lease
}

// PRMConfig configures the PRM scoring stage (rspo.<run>.prm.score).
type PRMConfig struct {
	// Model is the model to serve; nil serves version Object of the run's
	// PRM from the object store. Give exactly one.
	Model  *prm.Model
	Object int64
	// Service configures the scoring service (Run, Logger and Model are
	// set from this configuration).
	Service prmsvc.Config
}

// BufferConfig configures the buffer stage.
type BufferConfig struct {
	// Dir is the Pebble store's directory. Default DataDir/<run>/buffer.
	Dir string
	// Store and Service configure the store and the service.
	Store   buffersvc.Options
	Service buffersvc.Config
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
	EnvSteps         int64 `json:"env_steps"`
	EnvStepsActor    int64 `json:"env_steps_actor"`
	EnvStepsExplorer int64 `json:"env_steps_explorer"`
	// EnvStepsSource counts the environment steps of the PRM's source runs
	// (0 without): the compute-fair view adds them to EnvSteps.
	EnvStepsSource int64 `json:"env_steps_source"`
	// ShortCycles are the cycles the learner trained without all their
	// exploration (learnersvc.Checkpoint.ShortCycles): a run with any
	// sampled its buffer short of what its configuration asks.
	ShortCycles []int64 `json:"short_cycles,omitempty"`
	// SourcePRM, when the run's PRM was trained on source runs, says which
	// stored model it is, what it was trained on and whether the run
	// trained it or reused an earlier run's.
	SourcePRM *SourcePRM `json:"source_prm,omitempty"`
	// InitPolicy, for a warm-started run, is the policy it began from.
	InitPolicy *InitPolicy `json:"init_policy,omitempty"`
	// WallSeconds adds up the wall time of every Run of the run (its
	// first start, every resume, every rerun that re-reported it).
	WallSeconds float64 `json:"wall_seconds"`
	// PeakRSSBytes is the highest peak resident memory of those processes.
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	// Revisions are the code revisions of those processes that knew
	// theirs (Config.Revision) and trained (a Run of a finished run
	// adds none), each once.
	Revisions []string `json:"revisions,omitempty"`
	// Base, when the run trained with RSPO (or on dense rewards) and the
	// store holds a finished run of its base algorithm alone with the same
	// settings and updates, is that run's result, which report.html sets
	// beside this one's.
	Base *BaseRun `json:"base,omitempty"`
	// ReportDir is where the report files were written.
	ReportDir string `json:"report_dir"`
	// Config is the run's effective configuration, every default filled in
	// (as config.yaml beside it has it), when the run was started from
	// options.
	Config *Options `json:"config,omitempty"`
}

func (c Config) withDefaults() Config {
	if c.DataDir == "" {
		c.DataDir = "runs"
	}
	if c.Actors <= 0 {
		c.Actors = 1
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Learner.Logger == nil {
		c.Learner.Logger = c.Logger
	}
	return c
}

// run is the run's name.
func (c Config) run() string { return c.Learner.Run }

// Validate reports every problem with the configuration of an in-process run.
func (c Config) Validate() error {
	c = c.withDefaults()
	return errors.Join(c.Learner.Validate(), c.Policy.Validate(), c.servedExplorer())
}

// Run trains to the end (or until ctx ends), then writes the report. A run
// whose name already has a checkpoint in the store resumes. Every stage
// runs in this process, built by the stage table; the learner drives the
// run and the others stop once it has finished.
func Run(ctx context.Context, cfg Config) (Summary, error) {
	if err := cfg.Validate(); err != nil {
		return Summary{}, err
	}
	cfg = cfg.withDefaults()
	start := time.Now()
	if err := cfg.checkInitPolicyFile(ctx); err != nil { // before anything is written, even the source runs
		return Summary{}, err
	}
	if err := runSources(ctx, cfg); err != nil {
		return Summary{}, err
	}
	nc, js, shutdown, err := connect(ctx, cfg)
	if err != nil {
		return Summary{}, err
	}
	defer shutdown()
	if cfg.InitPolicy != "" {
		if err := streams.Ensure(ctx, js, cfg.Streams); err != nil {
			return Summary{}, err
		}
		if err := cfg.startPolicy(ctx, js); err != nil {
			return Summary{}, err
		}
	}
	recorded := false
	defer func() { // an interrupted or failed run's time counts too
		if !recorded {
			cfg.recordCost(ctx, js, start)
		}
	}()
	bus := Bus{Conn: nc, JS: js}
	if err := prepare(ctx, bus, cfg, true); err != nil {
		return Summary{}, err
	}
	// One run, one learner: a run another process trains is refused here,
	// before this one starts any stage that would join it.
	lease, err := learnersvc.AcquireLease(ctx, js, cfg.run(), learnersvc.LeaseOptions{TTL: cfg.Learner.LeaseTTL, Logger: cfg.Logger})
	if err != nil {
		return Summary{}, err
	}
	defer func() {
		if err := lease.Release(context.WithoutCancel(ctx)); err != nil {
			cfg.Logger.Warn("pipeline: learner lease not released: the run's next learner waits for it to lapse", "err", err)
		}
	}()
	cfg.lease = lease
	if err := cfg.prepareSourcePRM(ctx, js); err != nil {
		return Summary{}, err
	}
	before, resumed, err := learnersvc.LoadCheckpoint(ctx, js, cfg.run())
	if err != nil {
		return Summary{}, err
	}
	all, err := cfg.Stages(bus)
	if err != nil {
		return Summary{}, err
	}
	live, err := cfg.startReport(ctx, js)
	if err != nil {
		return Summary{}, err
	}
	finished := false
	defer func() {
		if live != nil && !finished {
			live.stop()
		}
	}()
	if cfg.OnStarting != nil {
		cfg.OnStarting()
	}
	if err := runStages(ctx, all); err != nil {
		return Summary{}, err
	}
	cp, _, err := learnersvc.LoadCheckpoint(ctx, js, cfg.run())
	if err != nil {
		return Summary{}, err
	}
	recorded = true
	rev := cfg.Revision
	if resumed && cp.Update == before.Update { // a finished run reported again: its code trained nothing
		rev = ""
	}
	cost, err := addCost(context.WithoutCancel(ctx), js, cfg.run(), rev, time.Since(start), peakRSS())
	if err != nil {
		return Summary{}, err
	}
	finished = true
	return writeReport(context.WithoutCancel(ctx), js, cfg, cp, cost, cfg.liveTables(ctx, live))
}

// startReport writes config.yaml into the report directory and starts
// its live tables, before the first update. Tables that cannot be opened
// (a metrics.jsonl that is not one) are logged and left: the report is
// then written afresh from the streams when the run ends.
func (c Config) startReport(ctx context.Context, js jetstream.JetStream) (*liveReport, error) {
	if err := writeConfigFile(c.Options, filepath.Join(c.reportDir(), ConfigFile)); err != nil {
		return nil, err
	}
	live, err := startLiveReport(ctx, js, c.run(), c.reportDir())
	if err != nil {
		c.Logger.Warn("pipeline: the report's tables are not kept live; they are written from the streams when the run ends", "run", c.run(), "err", err)
		return nil, nil
	}
	return live, nil
}

// liveTables stops following the metrics once every message is in the
// tables, and returns them; nil (logged) when they fell behind for good,
// so that the report is written afresh from the streams.
func (c Config) liveTables(ctx context.Context, live *liveReport) *report.Live {
	if live == nil {
		return nil
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), catchUpTimeout)
	defer cancel()
	w, undecodable, err := live.finish(fctx)
	if err != nil {
		c.Logger.Warn("pipeline: the report's live tables stopped; writing them afresh from the streams", "run", c.run(), "err", err)
		return nil
	}
	if undecodable > 0 {
		c.Logger.Warn("report: metrics messages left out: they do not decode", "run", c.run(), "messages", undecodable)
	}
	return w
}

// recordCost adds this Run's time since start and peak memory to the
// run's recorded cost, logging a failure: the run's own error matters more.
func (c Config) recordCost(ctx context.Context, js jetstream.JetStream, start time.Time) {
	if _, err := addCost(context.WithoutCancel(ctx), js, c.run(), c.Revision, time.Since(start), peakRSS()); err != nil {
		c.Logger.Warn("pipeline: run cost not recorded", "run", c.run(), "err", err)
	}
}

// Serve runs the one stage called name against the server at
// cfg.NATSURL until ctx ends (the learner: until the run is trained).
func Serve(ctx context.Context, cfg Config, name string) error {
	cfg = cfg.withDefaults()
	if cfg.NATSURL == "" {
		return fmt.Errorf("pipeline: serving stage %s needs a server URL", name)
	}
	nc, js, err := streams.Connect(ctx, cfg.NATSURL, cfg.Connect)
	if err != nil {
		return err
	}
	defer drain(nc)
	bus := Bus{Conn: nc, JS: js}
	if name == StageLearner { // the learner decides the PRM and the start: its source runs train in this process
		if err := streams.Ensure(ctx, js, cfg.Streams); err != nil {
			return err
		}
		if err := runSources(ctx, cfg); err != nil {
			return err
		}
		if err := cfg.startPolicy(ctx, js); err != nil {
			return err
		}
	}
	if err := prepare(ctx, bus, cfg, name == StageLearner); err != nil {
		return err
	}
	if name == StageLearner {
		if err := cfg.prepareSourcePRM(ctx, js); err != nil {
			return err
		}
	}
	st, err := cfg.Stage(bus, name)
	if err != nil {
		return err
	}
	cfg.Logger.Info("stage serving", "stage", name, "run", cfg.run())
	return st.Run(ctx)
}

// prepare ensures the streams and buckets exist and, for a learner,
// records or checks the run's settings.
func prepare(ctx context.Context, b Bus, cfg Config, learner bool) error {
	if err := streams.Ensure(ctx, b.JS, cfg.Streams); err != nil {
		return err
	}
	if !learner {
		return nil
	}
	return CheckSettings(ctx, b.JS, cfg.run(), cfg.Settings)
}

// runStages runs the learner stage in the foreground and every other stage
// beside it; once the learner returns, the others are stopped and drained.
// A background stage that fails stops the run.
func runStages(ctx context.Context, all []Stage) error {
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	lctx, stopLearner := context.WithCancel(ctx)
	defer stopLearner()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	var learner Stage
	for _, st := range all {
		if st.Name == StageLearner {
			learner = st
			continue
		}
		wg.Go(func() {
			if err := st.Run(bg); err != nil && bg.Err() == nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("pipeline: %s stopped: %w", st.Name, err))
				mu.Unlock()
				stopLearner()
			}
		})
	}
	runErr := learner.Run(lctx)
	cancel()
	wg.Wait()
	return errors.Join(append([]error{runErr}, errs...)...)
}

// EmbeddedHost is the only address Run's embedded server listens on: its
// clients are in this process, so nothing else needs to reach it.
const EmbeddedHost = "127.0.0.1"

// connect starts the embedded server or dials the given one.
func connect(ctx context.Context, cfg Config) (*nats.Conn, jetstream.JetStream, func(), error) {
	if cfg.NATSURL != "" {
		nc, js, err := streams.Connect(ctx, cfg.NATSURL, cfg.Connect)
		if err != nil {
			return nil, nil, nil, err
		}
		return nc, js, func() { drain(nc) }, nil
	}
	emb, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: filepath.Join(cfg.DataDir, "nats"),
		Host: EmbeddedHost, Port: -1, SyncAlways: cfg.SyncAlways})
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

// writeReport finishes the report directory: from the live tables when
// the run kept them, else from the run's metrics replayed; the summary's
// wall time and peak memory are the run's cost so far.
func writeReport(ctx context.Context, js jetstream.JetStream, cfg Config, cp learnersvc.Checkpoint, cost runCost, live *report.Live) (Summary, error) {
	lc := cfg.Learner.WithDefaults()
	sum := Summary{Run: lc.Run, Env: lc.Env, Algo: string(lc.Trainer.Algo), RSPO: lc.RSPO, Dense: lc.DenseOnly,
		Updates: cp.Update, Seed: lc.Seed, EnvStepsActor: cp.EnvStepsActor, EnvStepsExplorer: cp.EnvStepsExplorer, ShortCycles: cp.ShortCycles,
		EnvSteps: cp.EnvStepsActor + cp.EnvStepsExplorer, WallSeconds: cost.WallSeconds, PeakRSSBytes: cost.PeakRSSBytes, Revisions: cost.Revisions,
		ReportDir: filepath.Join(cfg.DataDir, lc.Run, "report")}
	if lc.RSPO {
		sum.Explore = string(lc.Explore.Mode)
	}
	sum.InitPolicy = cfg.initPolicy
	if cfg.Options != nil {
		eff := cfg.Options.Effective()
		sum.Config = &eff
	}
	var err error
	if sum.SourcePRM, err = loadSourcePRMRecord(ctx, js, lc.Run); err != nil {
		return sum, err
	}
	// The runs the PRM was trained on are the record's: a run resumed by a
	// build whose built-in source runs have other names keeps its PRM.
	sources := cfg.Sources
	if sum.SourcePRM != nil {
		sources = sum.SourcePRM.Provenance.Sources
	}
	if sum.EnvStepsSource, err = startSteps(ctx, js, sources, sum.InitPolicy); err != nil {
		return sum, err
	}
	err = streams.Replay(ctx, js, streams.ReplayOptions{Run: lc.Run, Subject: streams.CtrlKind(schemas.EventRunFinished)}, func(m streams.Message) error {
		if m.Event != nil {
			sum.Final = m.Event.Metrics
		}
		return nil
	})
	if err != nil {
		return sum, err
	}
	if sum.Base, err = findBaseRun(ctx, js, lc.Run, cp.Update); err != nil {
		return sum, err
	}
	page := report.Page{Headline: headline(sum), Summary: sum}
	if live != nil {
		_, err = live.Finish(page)
	} else {
		err = rewriteReport(ctx, js, cfg, page)
	}
	if err != nil {
		return sum, err
	}
	if err := writeConfigFile(cfg.Options, filepath.Join(sum.ReportDir, ConfigFile)); err != nil {
		return sum, err
	}
	return sum, exportPolicy(ctx, js, lc.Run, cp.Version, filepath.Join(sum.ReportDir, PolicyFile))
}

// rewriteReport writes the report directory afresh from the run's
// metrics replayed.
func rewriteReport(ctx context.Context, js jetstream.JetStream, cfg Config, page report.Page) error {
	var events []schemas.MetricsEvent
	undecodable := 0
	err := streams.Replay(ctx, js, streams.ReplayOptions{Run: cfg.run(), Subject: streams.KindMetrics}, func(m streams.Message) error {
		if m.Metrics != nil {
			events = append(events, *m.Metrics)
		} else {
			undecodable++
		}
		return nil
	})
	if undecodable > 0 {
		cfg.Logger.Warn("report: metrics messages left out: they do not decode", "run", cfg.run(), "messages", undecodable)
	}
	if err != nil {
		return err
	}
	_, err = report.WritePage(cfg.reportDir(), events, page)
	return err
}

// ConfigFile is the name of the run's effective options in the report
// directory, as YAML: `rspo run --config` reads it back.
const ConfigFile = "config.yaml"

// writeConfigFile writes o's effective form to path; nil options write
// nothing.
func writeConfigFile(o *Options, path string) error {
	if o == nil {
		return nil
	}
	var b bytes.Buffer
	if err := o.Effective().EncodeYAML(&b); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	return nil
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

// prepareSourcePRM trains the PRM on cfg.Sources for a new run that has
// none; a resumed run has published its PRM already.
func (cfg *Config) prepareSourcePRM(ctx context.Context, js jetstream.JetStream) error {
	if len(cfg.Sources) == 0 || cfg.Learner.PRM != nil {
		return nil
	}
	if _, ok, err := learnersvc.LoadCheckpoint(ctx, js, cfg.run()); err != nil || ok {
		return err
	}
	// The source runs before it and the PRM's collection after it each
	// leave their heap behind as garbage, which the runtime hands back to
	// the OS only slowly. Handing it back at once keeps the PRM's training
	// at the size of its feature rows (the household's first run: 0.65 GB
	// resident while the run's PRM trains, 1.06 GB before); the peak stays
	// the collection's, which sorts each source run's trajectories whole.
	debug.FreeOSMemory()
	m, err := sourcePRM(ctx, js, *cfg)
	if err != nil {
		return err
	}
	cfg.Learner.PRM = m
	debug.FreeOSMemory()
	return nil
}
