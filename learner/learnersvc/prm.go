package learnersvc

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/prm/prmsvc"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
)

// initialPRM publishes the configured PRM under this run, or — when none
// is given — warms one up: PRMWarmupTasks×GroupSize rollouts of the initial
// policy through the actors, a PRM trained on them, published. The
// warm-up's environment steps count as actor steps.
func (s *Service) initialPRM(ctx context.Context) error {
	m := s.cfg.PRM
	if m == nil {
		var err error
		if m, err = s.warmUpPRM(ctx); err != nil {
			return err
		}
	}
	if m.Version < 1 {
		// A run's PRM versions start at 1: version 0 means "no PRM" in a
		// cycle plan, and a prm-mode explorer refuses such a plan. A
		// snapshot never published before (prm.Random, a hand-built
		// model) carries version 0.
		m.Version = 1
	}
	if _, err := prmsvc.Publish(ctx, s.js, s.cfg.Run, m, prmsvc.PublishOptions{}); err != nil {
		return err
	}
	s.prm, s.cp.PRMVersion = m, m.Version
	return nil
}

func (s *Service) warmUpPRM(ctx context.Context) (*prm.Model, error) {
	s.startPhase(PhasePRMWarmup, 0)
	tasks, err := s.env.Tasks(envs.SplitTrain, s.cfg.PRMWarmupTasks, rollout.EpisodeSeed(s.cfg.Seed, "prm-warmup"))
	if err != nil {
		return nil, err
	}
	trajs, err := s.rollouts(ctx, "prm-warmup", 0, tasks, s.cfg.GroupSize)
	if err != nil {
		return nil, fmt.Errorf("learnersvc: PRM warm-up rollouts: %w", err)
	}
	s.cp.EnvStepsActor += rollout.EnvSteps(trajs)
	s.cp.TrajSeq = s.nextSeq
	m, rep, err := prm.Train(ctx, trajs, s.prmTrainConfig())
	if err != nil {
		return nil, fmt.Errorf("learnersvc: PRM warm-up training: %w", err)
	}
	s.cfg.Logger.Info("PRM warmed up", "trajectories", rep.Trajectories, "successes", rep.Successes,
		"heldout_auc", rep.HeldoutEval.AUC, "heldout_spearman", rep.HeldoutEval.Spearman)
	if rep.Successes == 0 {
		// Fitted to outcomes that are all 0, the PRM scores every step ~0:
		// an explorer or a dense-only run trained on it learns from noise.
		s.cfg.Logger.Warn("the PRM warm-up saw no successes: its scores carry no signal; give the run a PRM trained elsewhere (--prm, --prm-source, or the default tilted recipe) or more warm-up tasks (--prm-warmup-tasks)",
			"trajectories", rep.Trajectories)
	}
	s.publishPRMMetrics(ctx, 0, rep)
	return m, nil
}

func (s *Service) prmTrainConfig() prm.TrainConfig {
	c := s.cfg.PRMTrain
	if c.Seed == 0 {
		c.Seed = uint64(s.cfg.Seed)
	}
	return c
}

// refreshPRM retrains the PRM on the run's recorded trajectories (warm
// start from the current version, at most PRMRefreshEpochs epochs) and publishes the new version for the
// next cycle. Too little data keeps the current version.
func (s *Service) refreshPRM(ctx context.Context, cycle int64) error {
	if s.refresher == nil {
		extra := make([]prmsvc.Source, len(s.cfg.PRMRefreshExtraRuns))
		for i, run := range s.cfg.PRMRefreshExtraRuns {
			extra[i] = prmsvc.Source{Run: run}
		}
		r, err := prmsvc.NewRefresher(s.js, prmsvc.RefreshConfig{Run: s.cfg.Run, Initial: s.prm, Extra: extra,
			Window: s.cfg.PRMRefreshWindow, Epochs: s.cfg.PRMRefreshEpochs, Train: s.prmTrainConfig(), Publish: true,
			Accept: s.acceptRecorded(map[int64]schemas.CyclePlan{})})
		if err != nil {
			return err
		}
		s.refresher = r
	}
	m, rep, err := s.refresher.Refresh(ctx, cycle)
	if errors.Is(err, prm.ErrTooFewTrajectories) {
		s.cfg.Logger.Info("PRM refresh skipped: too little data yet", "cycle", cycle)
		return nil
	}
	if err != nil {
		return fmt.Errorf("learnersvc: PRM refresh after cycle %d: %w", cycle, err)
	}
	s.prm, s.cp.PRMVersion = m, m.Version
	s.cfg.Logger.Info("PRM refreshed", "cycle", cycle, "version", m.Version,
		"heldout_auc", rep.HeldoutEval.AUC, "successes", rep.Successes)
	return nil
}

func loadPRM(ctx context.Context, js jetstream.JetStream, run string, v int64) (*prm.Model, error) {
	m, err := prmsvc.Load(ctx, js, run, v)
	if err != nil {
		return nil, fmt.Errorf("learnersvc: PRM version %d: %w", v, err)
	}
	return m, nil
}

func (s *Service) publishPRMMetrics(ctx context.Context, cycle int64, rep prm.TrainReport) {
	s.metrics(ctx, schemas.MetricsEvent{Component: "prm", Kind: "prm", Cycle: cycle, Values: rep.Metrics(),
		ID: fmt.Sprintf("warmup/c%d", cycle)})
}
