package learnersvc

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

var quietLease = LeaseOptions{TTL: 600 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}

// A second learner of a run is refused while the first holds the lease,
// with the holder named; once the first releases it, the next one starts.
func TestLeaseRefusesASecondLearner(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	first, err := AcquireLease(ctx, js, "r1", quietLease)
	if err != nil {
		t.Fatal(err)
	}
	_, err = AcquireLease(ctx, js, "r1", quietLease)
	var held *LeaseHeldError
	if !errors.As(err, &held) || !errors.Is(err, ErrLeaseHeld) {
		t.Fatalf("second learner: %v, want a LeaseHeldError", err)
	}
	host, _ := os.Hostname()
	if held.Holder.PID != os.Getpid() || held.Holder.Host != host || held.Holder.Token != first.Holder().Token {
		t.Errorf("holder named %+v, want this process's lease %+v", held.Holder, first.Holder())
	}
	if other, err := AcquireLease(ctx, js, "r2", quietLease); err != nil { // another run is another lease
		t.Errorf("another run: %v", err)
	} else {
		_ = other.Release(ctx)
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	next, err := AcquireLease(ctx, js, "r1", quietLease)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	_ = next.Release(ctx)
}

// A learner that died holding the lease (no release, no heartbeat) does
// not hold the run forever: its lease lapses after its TTL and the next
// learner takes it over.
func TestLapsedLeaseIsTakenOver(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	kv, err := streams.State(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	dead, _ := json.Marshal(LeaseHolder{Host: "gone", PID: 1, Started: time.Unix(1700000000, 0).UTC(), TTLMillis: 600, Token: "dead"})
	if _, err := kv.Create(ctx, LeaseKey("r1"), dead); err != nil {
		t.Fatal(err)
	}
	l, err := AcquireLease(ctx, js, "r1", quietLease)
	if err != nil {
		t.Fatalf("lapsed lease: %v", err)
	}
	defer l.Release(ctx)
	e, err := kv.Get(ctx, LeaseKey("r1"))
	if err != nil {
		t.Fatal(err)
	}
	var h LeaseHolder
	if err := json.Unmarshal(e.Value(), &h); err != nil || h.Token != l.Holder().Token {
		t.Errorf("lease holds %s, want the new learner's", e.Value())
	}
}

// A holder whose lease another learner took over (it was cut off past its
// TTL) hears of it and stops, instead of training beside the new one.
func TestTakenOverLeaseIsLost(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	l, err := AcquireLease(ctx, js, "r1", quietLease)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	kv, err := streams.State(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := json.Marshal(LeaseHolder{Host: "elsewhere", PID: 2, TTLMillis: 600, Token: "other"})
	if _, err := kv.Put(ctx, LeaseKey("r1"), other); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Lost():
	case <-time.After(30 * time.Second):
		t.Fatal("the holder did not notice the takeover")
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if e, err := kv.Get(ctx, LeaseKey("r1")); err != nil || string(e.Value()) != string(other) {
		t.Errorf("release of a lost lease touched the new holder's: %v %s", err, valueOf(e))
	}
}
