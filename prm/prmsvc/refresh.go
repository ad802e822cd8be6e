package prmsvc

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// RefreshConfig configures a Refresher.
type RefreshConfig struct {
	// Run is the run whose streams feed the PRM and under which each
	// version is published. Required.
	Run string
	// Initial is the model to warm-start the first refresh from, e.g. one
	// trained on other runs (outside knowledge). Default: a fresh model.
	Initial *prm.Model
	// Extra are other runs' recorded streams, read once and mixed into
	// every refresh. Default none.
	Extra []Source
	// Window is how many of the run's own most recent trajectories a
	// refresh trains on. Default 8192.
	Window int
	// Train configures each refresh; WarmStart and Version are managed by
	// the Refresher (the previous version, and its version + 1).
	Train prm.TrainConfig
	// Epochs, when positive, is each refresh's epoch budget: it replaces
	// Train.MaxEpochs, so a refresh continues the previous version for at
	// most Epochs epochs (fewer if Train.Patience epochs pass without a
	// held-out improvement) and keeps its best epoch. A refresh without a
	// previous version (no Initial) trains a fresh model on the same
	// budget. 0 leaves Train.MaxEpochs (default 500) in force: the
	// unbounded refresh. Negative is refused.
	Epochs int
	// Publish stores and announces each version (Publish) and reports its
	// TrainReport as a metrics event (component "prm", kind "prm").
	// Default false.
	Publish bool
	// Accept, if set, says which of the run's own recorded trajectories a
	// refresh may train on: those it returns nil for. The run's streams
	// hold whatever anyone with a stage's credentials published there,
	// trajectories its learner refused or never asked for among them; the
	// learner passes the checks it trains by. Default: every trajectory.
	Accept func(*schemas.Trajectory) error
}

// Refresher retrains the PRM from a run's own streams at every cycle, as
// successes appear: each Refresh reads what was recorded since the last one
// (on-policy trajectories and swapped explorer records), warm-starts from
// the previous version (for at most Epochs epochs when set) on its window
// and, if asked, publishes the new version. It is not safe for concurrent
// use.
type Refresher struct {
	cfg    RefreshConfig
	js     jetstream.JetStream
	model  *prm.Model
	extra  []*schemas.Trajectory
	window []*schemas.Trajectory
	next   map[streams.SubjectKind]uint64 // subject → next stream sequence to read
	loaded bool
}

// NewRefresher validates cfg; nothing is read until the first Refresh.
func NewRefresher(js jetstream.JetStream, cfg RefreshConfig) (*Refresher, error) {
	if err := streams.ValidateRun(cfg.Run); err != nil {
		return nil, err
	}
	if cfg.Window == 0 {
		cfg.Window = 8192
	}
	if cfg.Epochs < 0 {
		return nil, fmt.Errorf("%w: epochs %d is negative (0 keeps the trainer's MaxEpochs)", ErrInvalidConfig, cfg.Epochs)
	}
	if cfg.Window < prm.MinTrajectories {
		return nil, fmt.Errorf("%w: window %d below %d", ErrInvalidConfig, cfg.Window, prm.MinTrajectories)
	}
	return &Refresher{cfg: cfg, js: js, model: cfg.Initial, next: map[streams.SubjectKind]uint64{}}, nil
}

// Model returns the latest version (nil before the first refresh unless an
// initial model was given).
func (r *Refresher) Model() *prm.Model { return r.model }

// Refresh reads the run's new trajectories, trains the next version and
// publishes it when configured. On error the previous version stays
// current. Errors: prm.ErrTooFewTrajectories while the run has too little
// data, Collect's, Train's and Publish's errors.
func (r *Refresher) Refresh(ctx context.Context, cycle int64) (*prm.Model, prm.TrainReport, error) {
	if err := r.loadExtra(ctx); err != nil {
		return nil, prm.TrainReport{}, err
	}
	if err := r.readNew(ctx); err != nil {
		return nil, prm.TrainReport{}, err
	}
	data := append(append(make([]*schemas.Trajectory, 0, len(r.extra)+len(r.window)), r.extra...), r.window...)
	cfg := r.cfg.Train
	cfg.WarmStart, cfg.Version = r.model, 0
	if r.cfg.Epochs > 0 {
		cfg.MaxEpochs = r.cfg.Epochs
	}
	if r.model == nil {
		cfg.Version = 1
	}
	m, rep, err := prm.Train(ctx, data, cfg)
	if err != nil {
		return nil, rep, fmt.Errorf("prmsvc: refresh %s cycle %d: %w", r.cfg.Run, cycle, err)
	}
	if r.cfg.Publish {
		if err := r.publish(ctx, cycle, m, rep); err != nil {
			return nil, rep, err
		}
	}
	r.model = m
	return m, rep, nil
}

func (r *Refresher) loadExtra(ctx context.Context) error {
	if r.loaded || len(r.cfg.Extra) == 0 {
		return nil
	}
	trajs, _, err := Collect(ctx, r.js, r.cfg.Extra)
	if err != nil {
		return err
	}
	sortTrajectories(trajs)
	r.extra, r.loaded = trajs, true
	return nil
}

// sortTrajectories orders trajs by cycle, source and id: what a refresh
// trains on then depends on which trajectories were recorded, not on the
// order the run's producers published them in (concurrent actors) nor on
// how many refreshes read them (a resumed learner reads all at once), so
// the same run refreshes to the same PRM bit for bit.
func sortTrajectories(trajs []*schemas.Trajectory) {
	slices.SortStableFunc(trajs, func(a, b *schemas.Trajectory) int {
		return cmp.Or(cmp.Compare(a.Cycle, b.Cycle), cmp.Compare(a.Source, b.Source), cmp.Compare(a.ID, b.ID))
	})
}

// readNew adds the run's trajectories recorded since the last call, keeps
// the window in sortTrajectories' order and trims it to its Window most
// recent (latest cycles) trajectories.
func (r *Refresher) readNew(ctx context.Context) error {
	for _, subj := range DefaultSubjects {
		src := Source{Run: r.cfg.Run, FromSeq: r.next[subj], Subjects: []streams.SubjectKind{subj}}
		trajs, st, err := Collect(ctx, r.js, []Source{src})
		if err != nil {
			return err
		}
		if last, ok := st.LastSeq[r.cfg.Run+"/"+string(subj)]; ok {
			r.next[subj] = last + 1
		}
		for _, t := range trajs {
			if r.cfg.Accept == nil || r.cfg.Accept(t) == nil {
				r.window = append(r.window, t)
			}
		}
	}
	sortTrajectories(r.window)
	if over := len(r.window) - r.cfg.Window; over > 0 {
		r.window = append(r.window[:0:0], r.window[over:]...)
	}
	return nil
}

func (r *Refresher) publish(ctx context.Context, cycle int64, m *prm.Model, rep prm.TrainReport) error {
	if _, err := Publish(ctx, r.js, r.cfg.Run, m, PublishOptions{Cycle: cycle, Metrics: rep.Metrics()}); err != nil {
		return err
	}
	_, err := streams.PublishMetrics(ctx, r.js, schemas.MetricsEvent{
		Run: r.cfg.Run, Component: "prm", Kind: "prm", Time: time.Now().UTC(), Cycle: cycle,
		Values: rep.Metrics(), Labels: map[string]string{"prm_version": strconv.FormatInt(m.Version, 10)},
		ID: fmt.Sprintf("refresh/c%d", cycle),
	})
	return err
}
