package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/buffersvc"
	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/learner/trainersvc"
	"github.com/rspo-dev/rspo/metrics"
	"github.com/rspo-dev/rspo/prm/prmsvc"
	"github.com/rspo-dev/rspo/producers"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/swapper/swappersvc"
)

// Stage is one service of a run: an actor, the explorer, the swapper, the
// buffer, the learner, or a stage of the user's own (Config.Extra). Run
// serves until ctx ends (the learner: until the run is trained) and
// returns once its work has drained.
type Stage struct {
	Name string
	Run  func(ctx context.Context) error
}

// Bus is the connection the stages of one process share.
type Bus struct {
	Conn *nats.Conn
	JS   jetstream.JetStream
}

// StageFunc builds a stage on a bus: the form in which a user adds a stage
// of their own (an analysis consumer, say) to an in-process run.
type StageFunc func(Bus) (Stage, error)

// The stages of a run, by the names `rspo serve NAME` takes.
const (
	StageActor    = "actor"
	StageExplorer = "explorer"
	StageSwapper  = "swapper"
	StageBuffer   = "buffer"
	StageLearner  = "learner"
	StageTrainer  = "trainer"
	StagePRM      = "prm"
)

// stageSpec is one row of the stage table: how a stage is built from a
// run's configuration, and whether an in-process run starts it — only with
// RSPO, or only when configured (the PRM scoring service, which no
// built-in stage calls: it serves consumers of the user's own).
type stageSpec struct {
	name       string
	rspoOnly   bool
	configured func(Config) bool
	build      func(c Config, b Bus) (Stage, error)
}

// stageTable lists every built-in stage (an in-process run starts the
// reference trainer only when the learner hands its updates to an
// external one). `rspo run` builds them all in one
// process (Config.Stages), `rspo serve NAME` one of them (Config.Stage):
// both through this table, so a stage is constructed in exactly one place.
var stageTable = []stageSpec{
	{name: StageActor, build: actorStage},
	{name: StageExplorer, rspoOnly: true, build: explorerStage},
	{name: StageSwapper, rspoOnly: true, build: swapperStage},
	{name: StageBuffer, rspoOnly: true, build: bufferStage},
	{name: StageLearner, build: learnerStage},
	{name: StageTrainer, configured: func(c Config) bool { return c.Learner.TrainerMode == learnersvc.TrainerExternal }, build: trainerStage},
	{name: StagePRM, configured: func(c Config) bool { return c.PRM.Model != nil || c.PRM.Object > 0 }, build: prmStage},
}

// StageNames lists the built-in stages in the table's order.
func StageNames() []string {
	names := make([]string, len(stageTable))
	for i, s := range stageTable {
		names[i] = s.name
	}
	return names
}

// Stage builds the built-in stage called name.
func (c Config) Stage(b Bus, name string) (Stage, error) {
	c = c.withDefaults()
	i := slices.IndexFunc(stageTable, func(s stageSpec) bool { return s.name == name })
	if i < 0 {
		return Stage{}, fmt.Errorf("pipeline: no stage %q; the stages are %v", name, StageNames())
	}
	return stageTable[i].build(c, b)
}

// Stages builds every stage of an in-process run: Actors actors, the
// explorer, swapper and buffer when RSPO is on, the learner, then the
// Extra stages.
func (c Config) Stages(b Bus) ([]Stage, error) {
	c = c.withDefaults()
	var out []Stage
	for _, spec := range stageTable {
		if spec.rspoOnly && !c.Learner.RSPO || spec.configured != nil && !spec.configured(c) {
			continue
		}
		n := 1
		if spec.name == StageActor {
			n = c.Actors
		}
		for i := range n {
			sc := c
			sc.Actor.Name = fmt.Sprintf("%s-%d", orName(c.Actor.Name, "actor"), i)
			st, err := spec.build(sc, b)
			if err != nil {
				return nil, err
			}
			out = append(out, st)
		}
	}
	for _, f := range c.Extra {
		st, err := f(b)
		if err != nil {
			return nil, fmt.Errorf("pipeline: extra stage: %w", err)
		}
		out = append(out, st)
	}
	return out, nil
}

func orName(name, def string) string {
	if name != "" {
		return name
	}
	return def
}

// counters are the message counters of the stage called name: nil
// without Metrics.
func (c Config) counters(name string) streams.Counters {
	if c.Metrics == nil {
		return nil
	}
	return c.Metrics.Stage(name)
}

func actorStage(c Config, b Bus) (Stage, error) {
	cfg := c.Actor
	cfg.Run, cfg.Logger, cfg.Counters = c.run(), c.Logger, c.counters(StageActor)
	sp, err := c.servedPolicy(b)
	if err != nil {
		return Stage{}, err
	}
	var side func(context.Context) error
	if sp != nil {
		if cfg.Backend, err = sp.backend(); err != nil {
			return Stage{}, err
		}
		side = sp.side
	}
	a, err := producers.NewActor(b.JS, cfg)
	if err != nil {
		return Stage{}, err
	}
	return Stage{Name: StageActor, Run: withSidecar(a.Run, side)}, nil
}

func explorerStage(c Config, b Bus) (Stage, error) {
	cfg := c.Explorer
	cfg.Run, cfg.Logger, cfg.Counters = c.run(), c.Logger, c.counters(StageExplorer)
	sp, err := c.servedPolicy(b)
	if err != nil {
		return Stage{}, err
	}
	var side func(context.Context) error
	if sp != nil { // tilted and frozen cycles play through the server
		if cfg.Backend, err = sp.backend(); err != nil {
			return Stage{}, err
		}
		side = sp.side
	}
	x, err := producers.NewExplorer(b.JS, cfg)
	if err != nil {
		return Stage{}, err
	}
	return Stage{Name: StageExplorer, Run: withSidecar(x.Run, side)}, nil
}

// serviceStage is the stage of a service whose constructor returned svc, err.
func serviceStage(name string, svc interface{ Run(context.Context) error }, err error) (Stage, error) {
	if err != nil {
		return Stage{}, err
	}
	return Stage{Name: name, Run: svc.Run}, nil
}

func swapperStage(c Config, b Bus) (Stage, error) {
	cfg := c.Swapper
	cfg.Run, cfg.Logger, cfg.Counters = c.run(), c.Logger, c.counters(StageSwapper)
	sw, err := swappersvc.New(b.JS, cfg)
	if err != nil {
		return Stage{}, err
	}
	return Stage{Name: StageSwapper, Run: func(ctx context.Context) error {
		err := sw.Run(ctx)
		n := sw.Counters()
		c.Logger.Info("swapper stopped", "swapped", n.Swapped, "duplicates", n.Duplicates, "rejected", n.Rejected)
		return err
	}}, nil
}

// bufferStage opens the buffer's Pebble store when the stage starts and
// closes it when the stage ends.
func bufferStage(c Config, b Bus) (Stage, error) {
	cfg := c.Buffer.Service
	cfg.Run, cfg.Logger, cfg.Counters = c.run(), c.Logger, c.counters(StageBuffer)
	if err := errors.Join(cfg.Validate(), c.Buffer.Store.Validate()); err != nil {
		return Stage{}, err
	}
	dir := c.Buffer.Dir
	if dir == "" {
		dir = filepath.Join(c.DataDir, c.run(), "buffer")
	}
	return Stage{Name: StageBuffer, Run: func(ctx context.Context) (err error) {
		store, err := buffersvc.Open(dir, c.Buffer.Store)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, store.Close()) }()
		svc, err := buffersvc.NewService(b.Conn, b.JS, store, cfg)
		if err != nil {
			return err
		}
		c.Logger.Info("buffer serving", "run", cfg.Run, "store", dir)
		err = svc.Run(ctx)
		n := svc.Counters()
		c.Logger.Info("buffer stopped", "stored", n.Stored, "replaced", n.Replaced, "dropped", n.Dropped,
			"dead_lettered", n.DeadLettered, "batches", n.Batches)
		return err
	}}, nil
}

// learnerStage runs the learner; its Run returns once the run is trained.
func learnerStage(c Config, b Bus) (Stage, error) {
	sp, err := c.servedPolicy(b)
	if err != nil {
		return Stage{}, err
	}
	lc := c.Learner
	var side func(context.Context) error
	if sp != nil { // evaluations play through the server too
		lc.EvalAgent, side = sp.evalAgent, sp.side
	}
	svc, err := learnersvc.New(b.Conn, b.JS, lc)
	if err != nil {
		return Stage{}, err
	}
	if c.lease != nil {
		svc.UseLease(c.lease)
	}
	svc.OnProgress(withMetrics(c.Progress, c.Metrics))
	svc.OnPhase(withMetrics(c.Phase, c.Metrics))
	if c.Metrics != nil {
		svc.OnBufferSample(c.Metrics.ObserveSample)
	}
	return Stage{Name: StageLearner, Run: withSidecar(svc.Run, side)}, nil
}

// trainerStage runs the reference external trainer: it applies the
// learner's batches (rspo.<run>.batch) with the built-in objective.
func trainerStage(c Config, b Bus) (Stage, error) {
	cfg := c.Trainer
	cfg.Run, cfg.Logger, cfg.Counters = c.run(), c.Logger, c.counters(StageTrainer)
	svc, err := trainersvc.New(b.JS, cfg)
	return serviceStage(StageTrainer, svc, err)
}

// withMetrics is f that also records the progress in m; f without m.
func withMetrics(f func(learnersvc.Progress), m *metrics.Metrics) func(learnersvc.Progress) {
	if m == nil {
		return f
	}
	return func(p learnersvc.Progress) {
		m.Learner(p)
		if f != nil {
			f(p)
		}
	}
}

// prmStage serves the PRM's scores on rspo.<run>.prm.score: PRM.Model, or
// version PRM.Object of the run's PRM loaded when the stage starts.
func prmStage(c Config, b Bus) (Stage, error) {
	cfg := c.PRM.Service
	cfg.Run, cfg.Logger, cfg.Model = c.run(), c.Logger, c.PRM.Model
	if c.Metrics != nil {
		cfg.OnScore = c.Metrics.ObserveScore
	}
	if (cfg.Model == nil) == (c.PRM.Object <= 0) {
		return Stage{}, errors.New("pipeline: the PRM stage serves either a model or an object-store version: give exactly one")
	}
	return Stage{Name: StagePRM, Run: func(ctx context.Context) error {
		if cfg.Model == nil {
			m, err := prmsvc.Load(ctx, b.JS, cfg.Run, c.PRM.Object)
			if err != nil {
				return err
			}
			cfg.Model = m
		}
		svc, err := prmsvc.New(b.Conn, b.JS, cfg)
		if err != nil {
			return err
		}
		return svc.Run(ctx)
	}}, nil
}
