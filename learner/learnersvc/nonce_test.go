package learnersvc

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// A run's nonces derive from its key alone: the same key gives every
// request attempt and cycle the same nonce (what a restarted learner
// relies on), another key, attempt or cycle another one, and every nonce
// is one the schemas accept.
func TestNoncesDeriveFromTheKey(t *testing.T) {
	a, b := NonceKey(make([]byte, nonceKeyBytes)), NonceKey(make([]byte, nonceKeyBytes))
	b[0] = 1
	seen := map[string]string{}
	for name, n := range map[string]string{
		"a u0 #0": a.Rollout("u0-v0-0", 0), "a u0 #1": a.Rollout("u0-v0-0", 1), "a u1 #0": a.Rollout("u1-v1-0", 0),
		"a c0": a.Cycle(0), "a c1": a.Cycle(1), "b u0 #0": b.Rollout("u0-v0-0", 0), "b c0": b.Cycle(0),
	} {
		if err := schemas.CheckNonce("nonce", n); err != nil || n == "" {
			t.Errorf("%s: nonce %q: %v", name, n, err)
		}
		if other, dup := seen[n]; dup {
			t.Errorf("%s and %s share the nonce %s", name, other, n)
		}
		seen[n] = name
	}
	if a.Rollout("u0-v0-0", 0) != a.Rollout("u0-v0-0", 0) || a.Cycle(3) != a.Cycle(3) {
		t.Error("a nonce changed between two derivations")
	}
	if (NonceKey(nil)).Rollout("u0-v0-0", 0) != "" {
		t.Error("a run without a key gives nonces")
	}
}

// A new run creates its key once and every later start reads it; a run
// resumed without one (begun before nonces) keeps its ids as they were.
func TestNonceKeyIsCreatedOnceAndKept(t *testing.T) {
	_, js := streamstest.Connect(t, streamstest.RunServer(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := &Service{cfg: Config{Run: "n1", Logger: slog.New(slog.DiscardHandler)}, js: js}
	if key, err := s.nonceKey(ctx, true); err != nil || key != nil {
		t.Fatalf("a resumed run without a key: %x, %v; want none", key, err)
	}
	first, err := s.nonceKey(ctx, false)
	if err != nil || len(first) != nonceKeyBytes {
		t.Fatalf("new run: %x, %v", first, err)
	}
	for _, resuming := range []bool{false, true} {
		again, err := s.nonceKey(ctx, resuming)
		if err != nil || string(again) != string(first) {
			t.Errorf("start (resuming %v) read %x, %v; want the run's key %x", resuming, again, err, first)
		}
	}
	if stored, ok, err := LoadNonceKey(ctx, js, "n1"); err != nil || !ok || string(stored) != string(first) {
		t.Errorf("LoadNonceKey: %x %v %v", stored, ok, err)
	}
}
