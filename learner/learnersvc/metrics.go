package learnersvc

import (
	"context"
	"fmt"
	"time"

	"github.com/rspo-dev/rspo/learner"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// metrics stamps and publishes a metrics event; a failure is logged, not
// fatal: metrics must never stop training.
func (s *Service) metrics(ctx context.Context, m schemas.MetricsEvent) {
	m.Run, m.Time = s.cfg.Run, time.Now().UTC()
	if m.Update == 0 {
		m.Update = s.cp.Update
	}
	if _, err := streams.PublishMetrics(ctx, s.js, m); err != nil {
		s.cfg.Logger.Warn("metrics not published", "component", m.Component, "kind", m.Kind, "err", err)
	}
}

// publishUpdateMetrics reports one update: the trainer's statistics (on-
// and off-policy separately), on-policy success and dense return,
// repeated-state visits, the version lag of the on-policy batch, and the
// environment steps spent so far.
func (s *Service) publishUpdateMetrics(ctx context.Context, cycle int64, st learner.UpdateStats, on []*schemas.Trajectory, offRecords int, lag batchLag, clock phaseClock) {
	v := st.Map()
	if s.cfg.RSPO {
		v["off_records"] = float64(offRecords)
		v["alpha"] = s.trainer.Config().Alpha
		if offRecords == 0 {
			v["alpha"] = 0
		}
	}
	for phase, sec := range clock.seconds {
		v["seconds_"+phase] = sec
	}
	var repeated, distinct, dense float64
	for _, t := range on {
		d, r := schemas.StateStats(t.Steps)
		distinct += float64(d)
		repeated += float64(r)
		for _, step := range t.Steps {
			dense += step.DenseReward
		}
	}
	n := float64(max(1, len(on)))
	v["success_rate"] = st.SuccessOn
	v["repeated_visits"] = repeated
	v["repeated_visits_per_traj"] = repeated / n
	v["distinct_states_per_traj"] = distinct / n
	if s.prm != nil {
		v["dense_return"] = dense / n
	}
	v["env_steps_actor"] = float64(s.cp.EnvStepsActor)
	v["env_steps_explorer"] = float64(s.cp.EnvStepsExplorer)
	v["env_steps"] = float64(s.cp.EnvStepsActor + s.cp.EnvStepsExplorer)
	v["ignored_messages"] = float64(s.ignored)         // read from the streams and unusable (logged each)
	v["short_cycles"] = float64(len(s.cp.ShortCycles)) // trained without all their exploration (logged each)
	v["version_lag_max"], v["version_lag_mean"] = float64(lag.max), lag.mean
	v["stale_refused"] = float64(s.staleRefused)   // on-policy trajectories older than MaxStaleness (logged each)
	v["refused_trajectories"] = float64(s.refused) // implausible or not the run's own, dead-lettered (guard.go)
	s.metrics(ctx, schemas.MetricsEvent{Component: "learner", Kind: "update", Cycle: cycle, Values: v,
		ID: fmt.Sprintf("update/u%d", s.cp.Update)})
}

// batchLag is how many policy versions the on-policy batch's trajectories
// lag behind the version the update trains: the largest and the mean.
type batchLag struct {
	max  int64
	mean float64
}

// phaseClock measures the wall time of an update's phases: waiting for
// exploration, collecting rollouts, sampling the buffer, the update's math,
// publishing the snapshot.
type phaseClock struct {
	last    time.Time
	seconds map[string]float64
}

// lap charges the time since the previous lap (or the clock's first use) to phase.
func (c *phaseClock) lap(phase string) {
	now := time.Now()
	if c.seconds == nil {
		c.seconds = map[string]float64{}
	}
	if !c.last.IsZero() {
		c.seconds[phase] += now.Sub(c.last).Seconds()
	}
	c.last = now
}
