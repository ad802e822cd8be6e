package prmsvc

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// follow swaps in every newer PRM announced on rspo.<run>.ctrl.prm.published,
// starting with the latest one stored before the service started, until ctx
// ends. A model that fails to load is logged and the current one kept.
func (s *Service) follow(ctx context.Context) {
	subject := streams.Subjects(s.cfg.Run).Ctrl(schemas.EventPRMPublished)
	cons, err := streams.OrderedConsumer(ctx, s.js, streams.StreamCtrl, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{subject},
		DeliverPolicy:  jetstream.DeliverLastPerSubjectPolicy,
	})
	if err != nil {
		s.log.Error("prm reload: cannot follow events; serving the current model", "subject", subject, "err", err)
		return
	}
	it, err := cons.Messages()
	if err != nil {
		s.log.Error("prm reload: cannot follow events; serving the current model", "subject", subject, "err", err)
		return
	}
	defer it.Stop()
	defer context.AfterFunc(ctx, it.Stop)()
	for {
		msg, err := it.Next()
		if err != nil {
			if ctx.Err() == nil {
				s.log.Error("prm reload: event stream ended", "err", err)
			}
			return
		}
		if reason := s.onPublished(ctx, msg.Data()); reason != "" {
			if err := streams.RecordDeadLetter(ctx, s.js, msg, Component, reason); err != nil {
				s.log.Error("prm reload: dead-letter failed", "reason", reason, "err", err)
			}
		}
	}
}

// onPublished loads the model of one prm.published event if it is newer.
// It returns why the event is bad ("" for a good one): the caller
// dead-letters it, and the current model stays.
func (s *Service) onPublished(ctx context.Context, data []byte) (reason string) {
	e, err := schemas.DecodeEvent(data)
	if err == nil && (e.Run != s.cfg.Run || e.Type != schemas.EventPRMPublished) {
		err = fmt.Errorf("%s event of run %q on run %q's prm.published", e.Type, e.Run, s.cfg.Run)
	}
	if err != nil {
		s.log.Warn("prm reload: bad prm.published event", "err", err)
		return "not a prm.published event of the run: " + err.Error()
	}
	if cur := s.Model().Version; e.PRMVersion <= cur {
		s.log.Debug("prm reload: not newer", "announced", e.PRMVersion, "serving", cur)
		return ""
	}
	m, err := LoadEvent(ctx, s.js, e)
	if err != nil {
		s.log.Error("prm reload failed; keeping the current model", "prm_version", e.PRMVersion, "err", err)
		return "announced PRM does not load: " + err.Error()
	}
	s.Swap(m)
	s.log.Info("prm reloaded", "prm_version", m.Version, "heldout_auc", m.Info.HeldoutAUC)
	return ""
}
