package prmsvc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// Run refreshes the PRM once per cycle.ended event of the run announced
// after Run starts, until ctx ends; it then returns nil. Each refresh is
// published when RefreshConfig.Publish is set, so scoring services with
// Reload pick it up. A refresh that lacks data is logged and skipped; other
// refresh failures are logged and the previous version kept. Run returns an
// error only if it cannot follow the events.
//
// The refresh for cycle c runs after the learner announced the end of c, so
// the explorer of cycle c+1 may start before the new version is published;
// it then explores with the previous version until its reload.
func (r *Refresher) Run(ctx context.Context, log *slog.Logger) error {
	if log == nil {
		log = slog.Default()
	}
	log = log.With("component", "prm-refresh", "run", r.cfg.Run)
	subject := streams.Subjects(r.cfg.Run).Ctrl(schemas.EventCycleEnded)
	cons, err := r.js.OrderedConsumer(ctx, streams.StreamCtrl, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{subject}, DeliverPolicy: jetstream.DeliverNewPolicy,
	})
	if err != nil {
		return fmt.Errorf("prmsvc: follow %s: %w", subject, err)
	}
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("prmsvc: follow %s: %w", subject, err)
	}
	defer it.Stop()
	defer context.AfterFunc(ctx, it.Stop)()
	for {
		msg, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("prmsvc: follow %s: %w", subject, err)
		}
		e, err := schemas.DecodeEvent(msg.Data())
		if err != nil {
			log.Warn("undecodable cycle.ended event", "err", err)
			continue
		}
		r.refreshLogged(ctx, e.Cycle, log)
	}
}

func (r *Refresher) refreshLogged(ctx context.Context, cycle int64, log *slog.Logger) {
	m, rep, err := r.Refresh(ctx, cycle)
	switch {
	case errors.Is(err, prm.ErrTooFewTrajectories):
		log.Info("prm refresh skipped: too few trajectories yet", "cycle", cycle)
	case err != nil:
		log.Error("prm refresh failed; keeping the previous version", "cycle", cycle, "err", err)
	default:
		log.Info("prm refreshed", "cycle", cycle, "prm_version", m.Version, "trajectories", rep.Trajectories,
			"successes", rep.Successes, "heldout_auc", rep.HeldoutEval.AUC, "heldout_spearman", rep.HeldoutEval.Spearman)
	}
}
