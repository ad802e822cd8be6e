package auth_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/producers"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/auth"
)

// TestAuthActorFollowsPolicies: with their own credentials an actor, an
// explorer and `rspo serve policy` may follow the run's policy.published
// events (the model book of a stage that plays through an inference
// server, the versions the policy server serves).
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
	for _, stage := range []string{auth.Actor, auth.Explorer, auth.Policy} {
		_, js, v := s.conn("ra", stage)
		book := producers.NewModelBook(js, "ra", "", slog.New(slog.NewTextHandler(&strings.Builder{}, nil)))
		rctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- book.Run(rctx) }()
		m, err := book.ModelFor(ctx, 1)
		stop()
		if err != nil || m != "ra-v1" {
			t.Errorf("%s: ModelFor(1) = %q, %v; want ra-v1", stage, m, err)
		}
		if err := <-done; err != nil {
			t.Errorf("%s: book: %v", stage, err)
		}
		if got := v.list(); len(got) > 0 {
			t.Errorf("%s: permission violations: %v", stage, got)
		}
	}
}
