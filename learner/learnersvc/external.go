package learnersvc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/learner"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// TrainerMode says who applies the learner's updates.
type TrainerMode string

// The trainer modes.
const (
	// TrainerBuiltin trains π_θ inside the learner.
	TrainerBuiltin TrainerMode = "builtin"
	// TrainerExternal hands every update's batch to a trainer over the bus.
	TrainerExternal TrainerMode = "external"
)

// external reports whether an external trainer applies the updates.
func (s *Service) external() bool { return s.cfg.TrainerMode == TrainerExternal }

// trainExternally assembles the update's batch, publishes it (unless its
// result is already stored: a learner redoing the update after a restart
// does not ask twice) and waits for the trainer's policy.published of the
// next version. It returns the update's figures — the batch's own and the
// optimisation figures the trainer reported — and the event.
func (s *Service) trainExternally(ctx context.Context, on, off []*schemas.Trajectory) (learner.UpdateStats, schemas.Event, error) {
	from := s.cp.Version
	if err := s.syncAssembler(ctx, from); err != nil {
		return learner.UpdateStats{}, schemas.Event{}, err
	}
	b, err := s.trainer.Assemble(on, off)
	if err != nil {
		return learner.UpdateStats{}, schemas.Event{}, permanent(fmt.Errorf("learnersvc: update %d: %w", s.cp.Update+1, err))
	}
	w, err := b.Export(s.cfg.Run, from)
	if err != nil {
		return learner.UpdateStats{}, schemas.Event{}, permanent(fmt.Errorf("learnersvc: update %d: %w", s.cp.Update+1, err))
	}
	since := time.Now()
	stored, err := s.versionStored(ctx, from+1)
	if err != nil {
		return learner.UpdateStats{}, schemas.Event{}, err
	}
	if stored {
		s.cfg.Logger.Info("version already trained; batch not published again", "update", w.Update, "policy_version", from+1)
	} else if ack, err := streams.PublishBatch(ctx, s.js, w); errors.Is(err, streams.ErrTooLarge) {
		return learner.UpdateStats{}, schemas.Event{}, permanent(fmt.Errorf("learnersvc: %w (raise the server's max_payload, or use fewer --tasks or a smaller --group)", err))
	} else if err != nil {
		return learner.UpdateStats{}, schemas.Event{}, err
	} else if ack.Duplicate {
		// Published before this start, within the dedupe window: the
		// trainer's answer, or its refusal, may be older than now.
		since = time.Time{}
	}
	e, err := s.awaitVersion(ctx, w, since)
	if err != nil {
		return learner.UpdateStats{}, schemas.Event{}, err
	}
	s.trainer.SetUpdates(w.Update)
	st, err := withTrainerFigures(b.Stats(), e.Metrics)
	st.Update, st.PolicyVersion = w.Update, e.PolicyVersion
	return st, e, err
}

// syncAssembler brings the batch assembler to where the built-in trainer
// would stand before the update from version v: its random source (which
// the swap term draws partners from) as the trainer stored it beside v, when
// the trainer is one that stores built-in trainer state, and the update
// count of the checkpoint.
func (s *Service) syncAssembler(ctx context.Context, v int64) error {
	defer s.trainer.SetUpdates(s.cp.Update)
	if v == 0 {
		return nil
	}
	b, err := streams.GetSnapshot(ctx, s.js, streams.BucketPolicy, trainerObject(s.cfg.Run, v))
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil // a trainer of its own kind: the assembler keeps its own source
	}
	if err != nil {
		return fmt.Errorf("learnersvc: trainer state of version %d: %w", v, err)
	}
	if err := s.trainer.RestoreState(b); err != nil {
		s.cfg.Logger.Warn("trainer state beside the version not readable; the assembler keeps its own random source",
			"policy_version", v, "err", err)
	}
	return nil
}

// versionStored reports whether policy version v is in the object store.
func (s *Service) versionStored(ctx context.Context, v int64) (bool, error) {
	store, err := s.js.ObjectStore(ctx, streams.BucketPolicy)
	if err != nil {
		return false, fmt.Errorf("learnersvc: open %s: %w", streams.BucketPolicy, err)
	}
	_, err = store.GetInfo(ctx, streams.PolicyObject(s.cfg.Run, v))
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("learnersvc: look up policy version %d: %w", v, err)
	}
	return true, nil
}

// errVersionSeen stops the wait once the trainer's event is in.
var errVersionSeen = errors.New("learnersvc: trained version announced")

// awaitVersion reads policy.published events until a trainer announces
// the version w makes (PolicyVersion+1, trained from w), logging every
// TrainerLogEvery that it still waits. Events the learner published itself
// (no schemas.BatchApplied) and events of other batches are passed over.
// A trainer that dead-letters the batch (a dead letter stored since
// `since` with the batch's message id) ends the wait with a permanent
// error naming its reason: the same batch would be refused again.
func (s *Service) awaitVersion(ctx context.Context, w *schemas.TrainBatch, since time.Time) (schemas.Event, error) {
	want := w.PolicyVersion + 1
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	refused := make(chan string, 1)
	go func() {
		_ = streams.Replay(wctx, s.js, streams.ReplayOptions{Run: s.cfg.Run, Subject: streams.KindDLQ, Since: since, Follow: true},
			func(m streams.Message) error {
				if m.Headers.Get(streams.HeaderDLQMsgID) != w.ID() {
					return nil
				}
				refused <- m.Headers.Get(streams.HeaderDLQComponent) + ": " + m.Headers.Get(streams.HeaderDLQReason)
				cancel()
				return errVersionSeen
			})
	}()
	go func() {
		start := time.Now()
		tick := time.NewTicker(s.cfg.TrainerLogEvery)
		defer tick.Stop()
		for {
			select {
			case <-wctx.Done():
				return
			case <-tick.C:
				s.cfg.Logger.Info("waiting for the trainer", "update", w.Update, "batch", w.ID(),
					"policy_version", want, "waited", time.Since(start).Round(time.Second))
			}
		}
	}()
	var got schemas.Event
	err := streams.Replay(wctx, s.js, streams.ReplayOptions{Run: s.cfg.Run,
		Subject: streams.CtrlKind(schemas.EventPolicyPublished), Follow: true}, func(m streams.Message) error {
		if m.Event == nil || m.Event.PolicyVersion != want {
			return nil
		}
		a, ok := schemas.BatchAppliedOf(*m.Event)
		if !ok || a.Batch != w.ID() || a.FromVersion != w.PolicyVersion {
			return nil
		}
		got = *m.Event
		return errVersionSeen
	})
	switch {
	case errors.Is(err, errVersionSeen):
		s.cfg.Logger.Info("trainer published", "update", w.Update, "policy_version", want, "trainer", trainerOf(got), "model", got.Model)
		return got, nil
	case ctx.Err() != nil:
		return schemas.Event{}, ctx.Err()
	}
	select {
	case why := <-refused:
		return schemas.Event{}, permanent(fmt.Errorf("learnersvc: the trainer refused the batch of update %d (%s): %s", w.Update, w.ID(), why))
	default:
	}
	switch {
	case err == nil:
		return schemas.Event{}, errors.New("learnersvc: policy.published replay ended before the trainer answered")
	}
	return schemas.Event{}, fmt.Errorf("learnersvc: wait for policy version %d: %w", want, err)
}

func trainerOf(e schemas.Event) string {
	a, _ := schemas.BatchAppliedOf(e)
	return a.Trainer
}

// withTrainerFigures returns st with the figures the trainer reported
// (those that name an UpdateStats field) in place of its own.
func withTrainerFigures(st learner.UpdateStats, figures map[string]float64) (learner.UpdateStats, error) {
	if len(figures) == 0 {
		return st, nil
	}
	m := st.Map()
	for k, v := range figures {
		if _, ok := m[k]; ok {
			m[k] = v
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return st, err
	}
	var out learner.UpdateStats
	if err := json.Unmarshal(b, &out); err != nil {
		return st, err
	}
	return out, nil
}

// adoptVersion records the trainer's version as π_θ's: the checkpoint's
// version and model, and the snapshot in hand when it is a built-in
// policy (for evaluation). A version that is not a built-in policy
// leaves the learner unable to evaluate in-process, and fails a run whose
// explorer trains π_B from π_θ's snapshot.
func (s *Service) adoptVersion(ctx context.Context, e schemas.Event) error {
	s.cp.Version, s.cp.Model = e.PolicyVersion, e.Model
	object := e.Object
	if object == "" {
		object = streams.PolicyObject(s.cfg.Run, e.PolicyVersion)
	}
	b, err := streams.GetSnapshot(ctx, s.js, streams.BucketPolicy, object)
	if err != nil {
		return fmt.Errorf("learnersvc: policy version %d: %w", e.PolicyVersion, err)
	}
	p, err := policy.Load(b)
	switch {
	case err == nil && p.Version() != e.PolicyVersion:
		return permanent(fmt.Errorf("learnersvc: the trainer's snapshot %s holds version %d, its event says %d", object, p.Version(), e.PolicyVersion))
	case err == nil:
		s.pol, s.builtinSnapshot = p, true
	case s.trainsPiB():
		return permanent(fmt.Errorf("learnersvc: the explorer trains π_B from π_θ's snapshot with the built-in trainer, and version %d (%s) is not a built-in policy (%v); use --explore-tilt, whose explorer acts with π_θ as served", e.PolicyVersion, object, err))
	default:
		s.pol.SetVersion(e.PolicyVersion)
		s.builtinSnapshot = false
	}
	s.pruneVersions(ctx, e.PolicyVersion)
	return nil
}

// trainsPiB reports whether the explorer trains π_B from π_θ's snapshot.
func (s *Service) trainsPiB() bool {
	return s.cfg.RSPO && s.cfg.Explore.Mode == schemas.ExplorerPRM && s.cfg.Explore.Tilt == 0
}

// canEvaluate reports whether π_θ can be evaluated in-process: always
// with the built-in trainer, with an external one while its snapshots are
// built-in policies. The reason is logged when it cannot.
func (s *Service) canEvaluate() bool {
	if !s.external() || s.builtinSnapshot || s.cfg.EvalAgent != nil {
		return true // an EvalAgent plays the version where it is served
	}
	s.cfg.Logger.Info("in-run evaluation skipped: the trainer's snapshot is not a built-in policy; evaluate it where it is served",
		"policy_version", s.cp.Version, "model", s.cp.Model)
	return false
}

// restoreExternal sets up the batch assembler of a resumed run with an
// external trainer: the update count (the swap term's ramp) and the
// snapshot in hand for evaluation, when it is a built-in one.
func (s *Service) restoreExternal(ctx context.Context, ref *policy.Policy) error {
	var err error
	if s.trainer, err = learner.New(ref, s.cfg.trainerConfig()); err != nil {
		return err
	}
	s.trainer.SetUpdates(s.cp.Update)
	s.pol, s.builtinSnapshot = ref, true
	if s.cp.Version == 0 {
		return nil
	}
	b, err := streams.GetSnapshot(ctx, s.js, streams.BucketPolicy, streams.PolicyObject(s.cfg.Run, s.cp.Version))
	if err != nil {
		return fmt.Errorf("learnersvc: policy version %d: %w", s.cp.Version, err)
	}
	p, err := policy.Load(b)
	if err == nil {
		s.pol = p
		return nil
	}
	if s.trainsPiB() {
		return permanent(fmt.Errorf("learnersvc: the explorer trains π_B from π_θ's snapshot with the built-in trainer, and version %d is not a built-in policy (%v); use --explore-tilt", s.cp.Version, err))
	}
	s.pol, s.builtinSnapshot = ref.Clone(), false
	s.pol.SetVersion(s.cp.Version)
	return nil
}
