package producers

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

func announce(t *testing.T, ctx context.Context, js jetstream.JetStream, v int64, model string) {
	t.Helper()
	e := schemas.Event{Type: schemas.EventPolicyPublished, Run: testRun, Time: time.Now(), PolicyVersion: v,
		Object: streams.PolicyObject(testRun, v), Model: model}
	if _, err := streams.PublishEvent(ctx, js, e); err != nil {
		t.Fatal(err)
	}
}

// TestModelBook: the book names each announced version's model — the
// event's, else the fallback — skips bad events, waits a while for a
// version not yet announced, then says so.
func TestModelBook(t *testing.T) {
	ctx, js := setup(t)
	announce(t, ctx, js, 0, "served-v0")
	if _, err := streams.Publish(ctx, js, streams.Subjects(testRun).Ctrl(schemas.EventPolicyPublished), []byte("{not json"), nil); err != nil {
		t.Fatal(err)
	}
	announce(t, ctx, js, 1, "")
	books := map[string]*ModelBook{
		"fallback": NewModelBook(js, testRun, "base", quietLogger()),
		"none":     NewModelBook(js, testRun, "", quietLogger()),
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, len(books))
	for _, b := range books {
		b.wait = 200 * time.Millisecond
		go func() { done <- b.Run(rctx) }()
	}
	for _, tc := range []struct {
		book string
		v    int64
		want string
		err  error
	}{
		{"fallback", 0, "served-v0", nil},
		{"fallback", 1, "base", nil},
		{"none", 0, "served-v0", nil},
		{"none", 1, "", ErrNoModelName},
		{"fallback", 2, "", ErrNotAnnounced},
	} {
		got, err := books[tc.book].ModelFor(ctx, tc.v)
		if got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("%s book, version %d: got %q, %v; want %q, %v", tc.book, tc.v, got, err, tc.want, tc.err)
		}
	}
	// A version announced while ModelFor waits is answered at once.
	books["fallback"].wait = time.Minute
	got := make(chan string, 1)
	go func() {
		m, _ := books["fallback"].ModelFor(ctx, 2)
		got <- m
	}()
	time.Sleep(20 * time.Millisecond)
	announce(t, ctx, js, 2, "served-v2")
	select {
	case m := <-got:
		if m != "served-v2" {
			t.Errorf("version 2: got %q, want served-v2", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ModelFor did not see version 2's event")
	}
	stop()
	for range books {
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
	if _, err := books["fallback"].ModelFor(rctx, 9); !errors.Is(err, context.Canceled) {
		t.Errorf("ModelFor with an ended context: %v", err)
	}
}
