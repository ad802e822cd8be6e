package learnersvc

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/learner"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// startedService is a learner of a run without RSPO that has made its
// fresh start (version 0 published, first checkpoint saved) on s's bus.
func startedService(t *testing.T) (*Service, context.Context) {
	t.Helper()
	srv := streamstest.RunServer(t)
	nc, js := streamstest.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	s, err := New(nc, js, Config{Run: "g1", Env: "household", EnvOptions: map[string]string{"preset": "easy"},
		Updates: 2, Tasks: 2, GroupSize: 2, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.start(ctx); err != nil {
		t.Fatal(err)
	}
	return s, ctx
}

// The update guard catches every way an update can go bad: a non-finite
// loss, value loss or gradient norm, and a parameter no snapshot holds.
func TestCheckUpdateCatchesNonFiniteUpdates(t *testing.T) {
	s, _ := startedService(t)
	if r := s.checkUpdate(learner.UpdateStats{Loss: 0.3, GradNorm: 2}); r != "" {
		t.Fatalf("a finite update refused: %s", r)
	}
	for _, st := range []learner.UpdateStats{{Loss: math.NaN()}, {ValueLoss: math.Inf(1)}, {GradNorm: math.NaN()}, {GradNormMax: math.Inf(-1)}} {
		if s.checkUpdate(st) == "" {
			t.Errorf("stats %+v passed", st)
		}
	}
	s.pol.SetParam(0, 1e39) // finite as a float64, infinite in a snapshot
	if r := s.checkUpdate(learner.UpdateStats{}); !strings.Contains(r, "no snapshot holds") {
		t.Errorf("a parameter beyond float32: %q", r)
	}
}

// A refused update leaves the run at its last good version: the learner
// reloads it from the store (its weights are finite again), publishes
// nothing, dead-letters the batch with the reason and ends the run with a
// NonFiniteUpdateError naming the update and the version kept.
func TestRefusedUpdateKeepsTheLastGoodVersion(t *testing.T) {
	s, ctx := startedService(t)
	s.pol.SetParam(0, math.NaN()) // what a diverged update leaves
	s.pol.SetVersion(1)
	on := []*schemas.Trajectory{streamstest.Trajectory("g1", schemas.SourceOnPolicy, 1)}
	off := []*schemas.Trajectory{streamstest.Trajectory("g1", schemas.SourceExplore, 2)}
	err := s.refuseUpdate(ctx, on, off, "its loss is NaN")
	var nf *NonFiniteUpdateError
	var p *permanentError
	if !errors.As(err, &nf) || !errors.As(err, &p) || nf.Update != 1 || nf.Version != 0 {
		t.Fatalf("got %v, want a permanent NonFiniteUpdateError of update 1 keeping version 0", err)
	}
	if err := s.pol.CheckFinite(); err != nil || s.pol.Version() != 0 {
		t.Errorf("after the refusal π_θ is version %d (%v), want the stored version 0", s.pol.Version(), err)
	}
	if _, err := streams.GetSnapshot(ctx, s.js, streams.BucketPolicy, streams.PolicyObject("g1", 1)); err == nil {
		t.Error("version 1 was stored")
	}
	var reasons []string
	err = streams.Replay(ctx, s.js, streams.ReplayOptions{Run: "g1", Subject: streams.KindDLQ + "." + deadLetters},
		func(m streams.Message) error {
			reasons = append(reasons, m.Headers.Get(streams.HeaderDLQSubject)+": "+m.Headers.Get(streams.HeaderDLQReason))
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"rspo.g1.traj.onpolicy: in the batch of update 1, refused: its loss is NaN",
		"rspo.g1.swapped: in the batch of update 1, refused: its loss is NaN"}
	if strings.Join(reasons, "\n") != strings.Join(want, "\n") {
		t.Errorf("dead letters %q, want %q", reasons, want)
	}
}
