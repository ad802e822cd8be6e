package learnersvc

import (
	"context"
	"fmt"
	"time"

	"github.com/rspo-dev/rspo/buffersvc"
	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/learner"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
)

// cycleOf is the RSPO cycle of update u (0-based): K updates a cycle.
func (s *Service) cycleOf(u int64) int64 { return u / int64(s.cfg.K) }

// step runs one learner update: (with RSPO) start the cycle if this is its
// first update, ask for the rollouts of this update and, with
// MaxStaleness S ≥ 1, of those up to S updates ahead (staleness.go),
// gather this update's on-policy rollouts and buffer records, update π_θ,
// publish the new version and the metrics, end the cycle if this was its
// last update, and checkpoint.
func (s *Service) step(ctx context.Context) error {
	u := s.cp.Update
	cycle := s.cycleOf(u)
	withinCycle := int(u % int64(s.cfg.K))
	tasks, err := s.updateTasks(cycle, withinCycle, u)
	if err != nil {
		return err
	}
	clock := phaseClock{last: time.Now()}
	if s.cfg.RSPO && withinCycle == 0 {
		s.startPhase(PhaseExploring, cycle)
		if err := s.startCycle(ctx, cycle); err != nil {
			return err
		}
		clock.lap("explore_wait")
	}
	if err := s.requestAhead(ctx, u); err != nil {
		return err
	}
	s.startPhase(PhaseUpdating, cycle)
	on, err := s.updateRollouts(ctx, u)
	if err != nil {
		return err
	}
	clock.lap("rollouts")
	lagMax, lagMean := versionLag(on, s.pol.Version())
	var off []*schemas.Trajectory
	if s.cfg.RSPO {
		if ids := s.offTasks(tasks, on); len(ids) > 0 {
			if off, err = s.sampleBuffer(ctx, cycle, u, ids); err != nil {
				return err
			}
			if off, err = s.targetOff(off, ids); err != nil {
				return err
			}
		}
		clock.lap("buffer_sample")
	}
	if s.prm != nil {
		if err := s.scoreDense(ctx, on); err != nil {
			return err
		}
	}
	stats, trained, err := s.train(ctx, on, off)
	if err != nil {
		return err
	}
	clear(s.refusedOnPolicy) // their requests are answered: the ids are no longer asked for
	clock.lap("update")
	s.cp.Update++
	s.cp.EnvStepsActor += rollout.EnvSteps(on)
	if s.cfg.RSPO {
		s.cp.countGroups(on)
	}
	s.cp.TrajSeq = s.nextSeq
	if s.external() {
		err = s.adoptVersion(ctx, trained)
	} else {
		err = s.publishPolicy(ctx, cycle)
	}
	if err != nil {
		return err
	}
	clock.lap("publish")
	s.publishUpdateMetrics(ctx, cycle, stats, on, len(off), batchLag{max: lagMax, mean: lagMean}, clock)
	if s.cfg.RSPO && (withinCycle == s.cfg.K-1 || s.cp.Update == int64(s.cfg.Updates)) {
		if err := s.endCycle(ctx, cycle); err != nil {
			return err
		}
	}
	evalSuccess := -1.0
	if s.evalDue() && s.cp.Update < int64(s.cfg.Updates) {
		vals, err := s.evaluate(ctx)
		if err != nil {
			return err
		}
		if v, ok := vals["eval_success_rate"]; ok { // not when the evaluation was skipped
			evalSuccess = v
		}
	}
	if err := saveCheckpoint(ctx, s.js, s.cfg.Run, s.cp); err != nil {
		return err
	}
	if s.progress != nil {
		if !s.cfg.RSPO {
			cycle = -1
		}
		s.progress(Progress{Update: s.cp.Update, Updates: int64(s.cfg.Updates), Cycle: cycle,
			SuccessRate: stats.SuccessOn, EvalSuccess: evalSuccess, EnvSteps: s.cp.EnvStepsActor + s.cp.EnvStepsExplorer,
			Version: s.cp.Version, VersionLagMax: lagMax, StaleRefused: s.staleRefused, Refused: s.refused,
			ShortCycles: int64(len(s.cp.ShortCycles))})
	}
	return nil
}

// train applies the update: in the learner, or by the external trainer,
// whose policy.published event it returns. An update the built-in trainer
// refuses for one trajectory is redone without it, and one that diverges
// is refused (updateguard.go).
func (s *Service) train(ctx context.Context, on, off []*schemas.Trajectory) (learner.UpdateStats, schemas.Event, error) {
	if s.external() {
		return s.trainExternally(ctx, on, off)
	}
	stats, err := s.trainer.Update(on, off)
	if err != nil {
		return stats, schemas.Event{}, s.refuseBatchMember(ctx, on, off, err)
	}
	if reason := s.checkUpdate(stats); reason != "" {
		return stats, schemas.Event{}, s.refuseUpdate(ctx, on, off, reason)
	}
	return stats, schemas.Event{}, nil
}

func (s *Service) evalDue() bool {
	return s.cfg.EvalEvery > 0 && s.cp.Update%int64(s.cfg.EvalEvery) == 0
}

// updateTasks draws the update's on-policy tasks. With RSPO they are the
// update's slice of the cycle's task pool, which the explorer explored, so
// buffer records find their task's on-policy group.
func (s *Service) updateTasks(cycle int64, withinCycle int, u int64) ([]envs.Task, error) {
	n := s.cfg.onTasks()
	if !s.cfg.RSPO {
		return s.env.Tasks(envs.SplitTrain, n, rollout.EpisodeSeed(s.cfg.Seed, "tasks", u))
	}
	pool, err := s.cycleTasks(cycle)
	if err != nil {
		return nil, err
	}
	return pool[withinCycle*n : (withinCycle+1)*n], nil
}

// cycleTasks is the cycle's task pool: K updates' worth of on-policy tasks.
func (s *Service) cycleTasks(cycle int64) ([]envs.Task, error) {
	return s.env.Tasks(envs.SplitTrain, s.cfg.K*s.cfg.onTasks(), rollout.EpisodeSeed(s.cfg.Seed, "cycle-tasks", cycle))
}

// sampleBuffer asks the buffer for α·B·N records of the cycle, preferring
// the tasks ids names, and keeps those the learner trains on
// (keepSampled). It asks for as many more as the cycle's records it
// refused before, which the buffer offers again, so refused records do not
// shrink the batch.
func (s *Service) sampleBuffer(ctx context.Context, cycle, u int64, ids []string) ([]*schemas.Trajectory, error) {
	want := s.cfg.offCount()
	count := want
	if s.refusedCycle == cycle {
		count = min(want+len(s.refusedRecords), buffersvc.MaxSampleCount)
	}
	recs, err := s.buffer.Sample(ctx, buffersvc.SampleRequest{Cycle: cycle, PreferTasks: ids,
		Count: count, Seed: rollout.EpisodeSeed(s.cfg.Seed, "sample", u)})
	if err != nil {
		return nil, fmt.Errorf("learnersvc: buffer sample for update %d: %w", u+1, err)
	}
	if recs, err = s.keepSampled(ctx, cycle, recs); err != nil {
		return nil, err
	}
	recs = recs[:min(len(recs), want)]
	if len(recs) < s.cfg.offCount() {
		s.cfg.Logger.Warn("buffer returned fewer records than asked", "cycle", cycle, "got", len(recs), "want", s.cfg.offCount())
	}
	return recs, nil
}

// scoreDense labels on-policy steps with the PRM's score: the dense return
// is reported beside true success (reward hacking shows as their
// divergence), and the dense-only baseline trains on it. A featurizer
// behind an inference server may fail (prm.ErrFeaturizer): the update then
// fails and is retried, never trained on made-up scores.
func (s *Service) scoreDense(ctx context.Context, on []*schemas.Trajectory) error {
	all, err := s.prm.ScoreBatchContext(ctx, on)
	if err != nil {
		return fmt.Errorf("learnersvc: score update rollouts with the PRM: %w", err)
	}
	for k, scores := range all {
		for i := range on[k].Steps {
			on[k].Steps[i].DenseReward = scores[i]
		}
	}
	return nil
}
