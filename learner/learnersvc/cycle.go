package learnersvc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/rspo-dev/rspo/producers"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// startCycle publishes cycle.started with the cycle's plan, queues the
// plan's explore shards for the explorers and waits until every shard is
// explored and the buffer holds the cycle's records. A wait that times out
// is logged, recorded in the checkpoint's ShortCycles (the run's summary
// warns of them) and training goes on with what the buffer holds: the
// learner never blocks forever on a missing explorer.
func (s *Service) startCycle(ctx context.Context, cycle int64) error {
	pool, err := s.cycleTasks(cycle)
	if err != nil {
		return err
	}
	plan, err := s.cfg.explorePlan()
	if err != nil {
		return err
	}
	explore := s.cfg.targetExploration(&plan, pool, s.cp.Groups)
	s.cp.Groups = nil // the counts start over with the cycle
	plan.Tasks, plan.Seed = rollout.TaskRefs(explore), rollout.EpisodeSeed(s.cfg.Seed, "explore", cycle)
	plan.Nonce = s.nonces.Cycle(cycle)
	if s.prm != nil && s.cfg.Explore.Mode == schemas.ExplorerPRM {
		plan.PRMVersion = s.prm.Version
	}
	if err := plan.Validate(); err != nil {
		return fmt.Errorf("learnersvc: cycle %d plan: %w", cycle, err)
	}
	raw, err := json.Marshal(plan)
	if err != nil {
		return err
	}
	if err := s.announce(ctx, schemas.Event{Type: schemas.EventCycleStarted, Cycle: cycle,
		PolicyVersion: s.pol.Version(), PRMVersion: plan.PRMVersion, Update: s.cp.Update, Config: raw}); err != nil {
		return err
	}
	if err := s.queueShards(ctx, cycle, plan); err != nil {
		return err
	}
	s.cfg.Logger.Info("cycle started", "cycle", cycle, "policy_version", s.pol.Version(), "tasks", len(explore),
		"shards", plan.ShardCount())
	return s.awaitExploration(ctx, cycle, plan)
}

// errFound stops a replay once the awaited event is seen.
var errFound = errors.New("learnersvc: found")

// awaitExploration waits for a cycle.explored of every shard of the
// cycle's plan (the first answer of each shard counts) and then for the
// buffer to hold the records they announced together. An event that
// cannot answer a shard — another policy version or shard count, or fewer
// trajectories than the shard's tasks, the least any explorer mode
// publishes — is logged, counted and ignored: a forged "explored, 0
// trajectories" must not end the wait. A shard an explorer dead-letters
// (over its step budget, a plan it cannot carry out) is never explored,
// so the run stops with the explorer's reason instead of waiting out
// ExploreTimeout and training without it.
func (s *Service) awaitExploration(ctx context.Context, cycle int64, plan schemas.CyclePlan) error {
	deadline := time.Now().Add(s.cfg.ExploreTimeout)
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	refused := make(chan string, 1)
	what := s.exploreShardsWaitedFor(cycle, plan)
	defer s.settled(what)
	go s.watchDeadLetters(wctx, producers.ExplorerComponent, s.queuedAs(what), refused, cancel)
	reports := newShardReports(plan, s.pol.Version())
	err := streams.Replay(wctx, s.js, streams.ReplayOptions{Run: s.cfg.Run,
		Subject: streams.CtrlKind(schemas.EventCycleExplored), Follow: true},
		func(m streams.Message) error {
			switch {
			case m.Event == nil:
				s.ignored++
				s.cfg.Logger.Warn("ignoring an undecodable message on cycle.explored", "seq", m.Seq, "err", m.Err)
			case m.Event.Cycle != cycle:
			default:
				if err := reports.add(*m.Event); err != nil {
					s.ignored++
					s.cfg.Logger.Warn("ignoring a cycle.explored that does not answer the cycle's plan", "cycle", cycle,
						"seq", m.Seq, "err", err)
				} else if reports.complete() {
					return errFound
				}
			}
			return nil
		})
	if !errors.Is(err, errFound) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		select {
		case why := <-refused:
			return permanent(fmt.Errorf("learnersvc: exploration of cycle %d: %s", cycle, why))
		default:
		}
		s.cfg.Logger.Warn("not every shard explored before the timeout: training on what the buffer holds",
			"cycle", cycle, "shards_explored", len(reports.got), "shards", plan.ShardCount(),
			"timeout", s.cfg.ExploreTimeout, "err", err)
		s.shortCycle(cycle)
		return nil
	}
	if cycle >= s.cp.ExploredCycles { // count each cycle's explorer steps once, also across restarts
		s.cp.EnvStepsExplorer += reports.envSteps()
		s.cp.ExploredCycles = cycle + 1
	}
	return s.awaitBuffer(wctx, ctx, cycle, reports.trajectories())
}

// awaitBuffer polls the buffer's stats until the cycle holds want records.
func (s *Service) awaitBuffer(wctx, ctx context.Context, cycle, want int64) error {
	for {
		st, err := s.buffer.Stats(wctx)
		if err == nil {
			for _, c := range st.Cycles {
				if c.Cycle == cycle && c.Records >= want {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wctx.Done():
			s.cfg.Logger.Warn("buffer did not receive the cycle's records before the timeout: training on what it holds",
				"cycle", cycle, "want", want, "timeout", s.cfg.ExploreTimeout, "last_error", err)
			s.shortCycle(cycle)
			return nil
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// shortCycle records that cycle trains without all of its exploration,
// once per cycle (a resumed learner may wait for the same cycle again).
func (s *Service) shortCycle(cycle int64) {
	if !slices.Contains(s.cp.ShortCycles, cycle) {
		s.cp.ShortCycles = append(s.cp.ShortCycles, cycle)
	}
}

// endCycle publishes cycle.ended (the buffer clears the cycle) and, when
// configured, refreshes the PRM from the run's streams for the next cycle.
func (s *Service) endCycle(ctx context.Context, cycle int64) error {
	if err := s.announce(ctx, schemas.Event{Type: schemas.EventCycleEnded, Cycle: cycle,
		PolicyVersion: s.pol.Version(), Update: s.cp.Update}); err != nil {
		return err
	}
	if s.cfg.PRMRefresh && s.cfg.needsPRM() {
		return s.refreshPRM(ctx, cycle)
	}
	return nil
}
