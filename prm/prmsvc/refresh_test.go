package prmsvc

import (
	"errors"
	"testing"

	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/prm/prmtest"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// TestRefresherEachCycle refreshes the PRM twice as the run records more
// data: versions count up, the second is warm-started, each version is
// published with its metrics, and only new messages are read.
func TestRefresherEachCycle(t *testing.T) {
	ctx := testContext(t)
	_, js := streamstest.Connect(t, streamstest.RunServer(t))
	r, err := NewRefresher(js, RefreshConfig{Run: "ref1", Publish: true, Train: prm.TrainConfig{Seed: 1, MaxEpochs: 30}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Refresh(ctx, 0); !errors.Is(err, prm.ErrTooFewTrajectories) {
		t.Fatalf("refresh of an empty run: got %v, want ErrTooFewTrajectories", err)
	}
	trajs, _ := prmtest.Decisive("ref1", 1, 120, 5)
	record(t, ctx, js, trajs[:60])
	m1, rep1, err := r.Refresh(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	record(t, ctx, js, trajs[60:])
	m2, rep2, err := r.Refresh(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if m1.Version != 1 || m2.Version != 2 || !rep2.WarmStart || rep2.FromVersion != 1 {
		t.Errorf("versions: got %d then %d (warm %v from %d), want 1 then 2 warm from 1", m1.Version, m2.Version, rep2.WarmStart, rep2.FromVersion)
	}
	if rep1.Trajectories != 60 || rep2.Trajectories != 120 {
		t.Errorf("trained on %d then %d trajectories, want 60 then 120", rep1.Trajectories, rep2.Trajectories)
	}
	var versions []int64
	err = streams.Replay(ctx, js, streams.ReplayOptions{Run: "ref1", Subject: "ctrl.prm.published"}, func(msg streams.Message) error {
		versions = append(versions, msg.Event.PRMVersion)
		if _, ok := msg.Event.Metrics["heldout_spearman"]; !ok {
			t.Errorf("event of version %d lacks heldout_spearman: %v", msg.Event.PRMVersion, msg.Event.Metrics)
		}
		return nil
	})
	if err != nil || len(versions) != 2 || versions[1] != 2 {
		t.Errorf("published versions: got %v (%v), want [1 2]", versions, err)
	}
	metrics := 0
	err = streams.Replay(ctx, js, streams.ReplayOptions{Run: "ref1", Subject: "metrics.prm"}, func(msg streams.Message) error {
		metrics++
		return nil
	})
	if err != nil || metrics != 2 {
		t.Errorf("metrics events: got %d (%v), want 2", metrics, err)
	}
	if r.Model() != m2 {
		t.Error("Model() is not the latest version")
	}
}

// TestRefresherWithOutsideKnowledge starts from a model trained on another
// run and mixes that run's data into every refresh.
func TestRefresherWithOutsideKnowledge(t *testing.T) {
	ctx := testContext(t)
	_, js := streamstest.Connect(t, streamstest.RunServer(t))
	easy, _ := prmtest.Decisive("easy", 1, 100, 5)
	record(t, ctx, js, easy)
	hard, _ := prmtest.Decisive("hard", 2, 10, 5)
	record(t, ctx, js, hard)
	r, err := NewRefresher(js, RefreshConfig{Run: "hard", Extra: []Source{{Run: "easy"}}, Train: prm.TrainConfig{Seed: 1, MaxEpochs: 20}})
	if err != nil {
		t.Fatal(err)
	}
	_, rep, err := r.Refresh(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Trajectories != 110 {
		t.Errorf("trained on %d trajectories, want 100 from the easy run + 10 own", rep.Trajectories)
	}
}
