package auth_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/rollout/rolloutsvc"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/auth"
)

// TestAuthActorFollowsPolicies: with its own credentials an actor may
// follow the run's policy.published events (the model book of an actor
// that plays through an inference server).
func TestAuthActorFollowsPolicies(t *testing.T) {
	s := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, ljs, _ := s.conn("ra", auth.Learner)
	e := schemas.Event{Type: schemas.EventPolicyPublished, Run: "ra", Time: time.Now(), PolicyVersion: 1,
		Object: streams.PolicyObject("ra", 1), Model: "ra-v1"}
	if _, err := streams.PublishEvent(ctx, ljs, e); err != nil {
		t.Fatal(err)
	}
	_, ajs, v := s.conn("ra", auth.Actor)
	book := rolloutsvc.NewModelBook(ajs, "ra", "", slog.New(slog.NewTextHandler(&strings.Builder{}, nil)))
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- book.Run(rctx) }()
	m, err := book.ModelFor(ctx, 1)
	stop()
	if err != nil || m != "ra-v1" {
		t.Errorf("ModelFor(1) = %q, %v; want ra-v1", m, err)
	}
	if err := <-done; err != nil {
		t.Errorf("book: %v", err)
	}
	if got := v.list(); len(got) > 0 {
		t.Errorf("permission violations: %v", got)
	}
}
