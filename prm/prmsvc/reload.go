package prmsvc

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// follow swaps in every newer PRM announced on rspo.<run>.ctrl.prm.published,
// starting with the latest one stored before the service started, until ctx
// ends. A model that fails to load is logged and the current one kept.
func (s *Service) follow(ctx context.Context) {
	subject := streams.Subjects(s.cfg.Run).Ctrl(schemas.EventPRMPublished)
	cons, err := s.js.OrderedConsumer(ctx, streams.StreamCtrl, jetstream.OrderedConsumerConfig{
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
		s.onPublished(ctx, msg.Data())
	}
}

// onPublished loads the model of one prm.published event if it is newer.
func (s *Service) onPublished(ctx context.Context, data []byte) {
	e, err := schemas.DecodeEvent(data)
	if err != nil {
		s.log.Warn("prm reload: undecodable prm.published event", "err", err)
		return
	}
	if cur := s.Model().Version; e.PRMVersion <= cur {
		s.log.Debug("prm reload: not newer", "announced", e.PRMVersion, "serving", cur)
		return
	}
	m, err := LoadEvent(ctx, s.js, e)
	if err != nil {
		s.log.Error("prm reload failed; keeping the current model", "prm_version", e.PRMVersion, "err", err)
		return
	}
	s.Swap(m)
	s.log.Info("prm reloaded", "prm_version", m.Version, "heldout_auc", m.Info.HeldoutAUC)
}
