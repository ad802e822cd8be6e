package producers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// ErrNotAnnounced means a policy version has no policy.published event
// yet; a caller retries.
var ErrNotAnnounced = errors.New("producers: policy version not announced yet")

// ErrNoModelName means a version's policy.published event names no model
// and the book has no fallback name.
var ErrNoModelName = errors.New("producers: policy version names no model")

// FollowPolicies calls fn with every policy.published event of run, from
// the start of RSPO_CTRL, in order, until ctx ends (then it returns nil).
// An event that does not decode, or is of another run, is logged and
// skipped. It returns an error only when it cannot follow the subject.
func FollowPolicies(ctx context.Context, js jetstream.JetStream, run string, log *slog.Logger, fn func(schemas.Event)) error {
	subject := streams.Subjects(run).Ctrl(schemas.EventPolicyPublished)
	err := streams.Follow(ctx, js, streams.StreamCtrl, subject, func(msg jetstream.Msg) {
		e, err := schemas.DecodeEvent(msg.Data())
		if err == nil && (e.Run != run || e.Type != schemas.EventPolicyPublished) {
			err = fmt.Errorf("%s event of run %q", e.Type, e.Run)
		}
		if err != nil {
			log.Warn("bad policy.published event skipped", "subject", subject, "err", err)
			return
		}
		fn(e)
	})
	if err != nil {
		return fmt.Errorf("producers: %w", err)
	}
	return nil
}

// ModelBook names the model an inference server serves each policy
// version under: it follows the run's policy.published events
// (FollowPolicies) and maps version → Event.Model, or → its fallback name
// when an event names none. It is safe for concurrent use.
type ModelBook struct {
	js       jetstream.JetStream
	run      string
	fallback string
	wait     time.Duration
	log      *slog.Logger

	mu      sync.Mutex
	models  map[int64]string
	changed chan struct{} // closed and replaced on every new version
}

// DefaultModelWait is how long ModelFor waits for a version's event.
const DefaultModelWait = 5 * time.Second

// NewModelBook returns a book of run's versions; fallback ("" for none)
// names the model of a version whose event names none. Run must be
// running for ModelFor to learn anything.
func NewModelBook(js jetstream.JetStream, run, fallback string, log *slog.Logger) *ModelBook {
	if log == nil {
		log = slog.Default()
	}
	return &ModelBook{js: js, run: run, fallback: fallback, wait: DefaultModelWait, log: log,
		models: map[int64]string{}, changed: make(chan struct{})}
}

// Run follows the run's policy.published events until ctx ends.
func (b *ModelBook) Run(ctx context.Context) error {
	return FollowPolicies(ctx, b.js, b.run, b.log, func(e schemas.Event) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.models[e.PolicyVersion] = e.Model
		close(b.changed)
		b.changed = make(chan struct{})
	})
}

// ModelFor returns the model name of version v. It waits up to
// DefaultModelWait for the version's event, then returns ErrNotAnnounced;
// it returns ErrNoModelName when the event names no model and the book
// has no fallback.
func (b *ModelBook) ModelFor(ctx context.Context, v int64) (string, error) {
	timer := time.NewTimer(b.wait)
	defer timer.Stop()
	for {
		b.mu.Lock()
		m, ok := b.models[v]
		changed := b.changed
		b.mu.Unlock()
		switch {
		case ok && m != "":
			return m, nil
		case ok && b.fallback != "":
			return b.fallback, nil
		case ok:
			return "", fmt.Errorf("%w: version %d of run %s (give the actor a model name to fall back on)", ErrNoModelName, v, b.run)
		}
		select {
		case <-changed:
		case <-timer.C:
			return "", fmt.Errorf("%w: version %d of run %s", ErrNotAnnounced, v, b.run)
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}
