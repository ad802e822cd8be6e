package prmsvc

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/prm/prmtest"
	"github.com/rspo-dev/rspo/schemas"
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

// TestRefresherEpochBudget bounds a refresh to Epochs epochs: it continues
// the previous version (the same model prm.Train makes warm-started from
// it, not a fresh one), runs exactly the budget while the held-out loss
// has patience left, overrides Train.MaxEpochs, and is deterministic.
func TestRefresherEpochBudget(t *testing.T) {
	ctx := testContext(t)
	_, js := streamstest.Connect(t, streamstest.RunServer(t))
	trajs, _ := prmtest.Decisive("budget", 3, 80, 5)
	record(t, ctx, js, trajs)
	prev, _, err := prm.Train(ctx, trajs[:40], prm.TrainConfig{Seed: 9, MaxEpochs: 15})
	if err != nil {
		t.Fatal(err)
	}
	const k = 3
	train := prm.TrainConfig{Seed: 1, MaxEpochs: 30, Patience: 100}
	refresh := func() (*prm.Model, prm.TrainReport, *Refresher) {
		t.Helper()
		r, err := NewRefresher(js, RefreshConfig{Run: "budget", Initial: prev, Epochs: k, Train: train})
		if err != nil {
			t.Fatal(err)
		}
		m, rep, err := r.Refresh(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		return m, rep, r
	}
	m, rep, r := refresh()
	if rep.Epochs != k || !rep.WarmStart || rep.FromVersion != prev.Version || m.Version != prev.Version+1 {
		t.Errorf("report: %d epochs, warm %v from %d, version %d; want %d epochs warm from %d, version %d",
			rep.Epochs, rep.WarmStart, rep.FromVersion, m.Version, k, prev.Version, prev.Version+1)
	}
	got := encode(t, m)
	wantCfg := train
	wantCfg.WarmStart, wantCfg.MaxEpochs = prev, k
	want, _, err := prm.Train(ctx, r.window, wantCfg)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, encode(t, want)) {
		t.Error("the refreshed model is not prm.Train's warm start from the previous version with the epoch budget")
	}
	freshCfg := train
	freshCfg.MaxEpochs = k
	fresh, _, err := prm.Train(ctx, r.window, freshCfg)
	if err != nil {
		t.Fatal(err)
	}
	fresh.Version = m.Version
	if bytes.Equal(got, encode(t, fresh)) {
		t.Error("the refreshed model equals a fresh model's: the previous version was not continued")
	}
	again, _, _ := refresh()
	if !bytes.Equal(got, encode(t, again)) {
		t.Error("two refreshes with the same seed and data differ")
	}
	if prev.Version != 1 || !bytes.Equal(encode(t, prev), encode(t, r.cfg.Initial)) {
		t.Error("the previous version was modified")
	}
}

// TestRefresherEpochsZeroKeepsTrainBudget: Epochs 0 leaves Train.MaxEpochs
// in force (the unbounded refresh); a negative budget is refused.
func TestRefresherEpochsZeroKeepsTrainBudget(t *testing.T) {
	ctx := testContext(t)
	_, js := streamstest.Connect(t, streamstest.RunServer(t))
	trajs, _ := prmtest.Decisive("full", 4, 40, 5)
	record(t, ctx, js, trajs)
	r, err := NewRefresher(js, RefreshConfig{Run: "full", Train: prm.TrainConfig{Seed: 1, MaxEpochs: 4, Patience: 100}})
	if err != nil {
		t.Fatal(err)
	}
	if _, rep, err := r.Refresh(ctx, 1); err != nil || rep.Epochs != 4 {
		t.Errorf("refresh: %d epochs (%v), want Train.MaxEpochs 4", rep.Epochs, err)
	}
	if _, err := NewRefresher(js, RefreshConfig{Run: "full", Epochs: -1}); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "epochs -1") {
		t.Errorf("epochs -1: got %v, want ErrInvalidConfig naming the epochs", err)
	}
}

func encode(t *testing.T, m *prm.Model) []byte {
	t.Helper()
	b, err := prm.EncodeSnapshot(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRefresherIgnoresRecordingOrder: the same trajectories recorded in
// another order (concurrent producers) and read by fewer refreshes (a
// resumed learner, starting from the stored version) refresh to the same
// PRM bit for bit.
func TestRefresherIgnoresRecordingOrder(t *testing.T) {
	ctx := testContext(t)
	trajs, _ := prmtest.Decisive("order", 5, 60, 5)
	for i, tr := range trajs {
		tr.Cycle = int64(i / 30)
	}
	cfg := RefreshConfig{Run: "order", Epochs: 4, Train: prm.TrainConfig{Seed: 2}}
	_, js1 := streamstest.Connect(t, streamstest.RunServer(t))
	record(t, ctx, js1, trajs[:30])
	r1, err := NewRefresher(js1, cfg)
	if err != nil {
		t.Fatal(err)
	}
	v1, _, err := r1.Refresh(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	record(t, ctx, js1, trajs[30:])
	v2, _, err := r1.Refresh(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	_, js2 := streamstest.Connect(t, streamstest.RunServer(t))
	reversed := slices.Clone(trajs)
	slices.Reverse(reversed)
	for _, tr := range reversed { // each as the first recording had it
		publish := streams.PublishTrajectory
		if tr.Swapped {
			publish = streams.PublishSwapped
		}
		if _, err := publish(ctx, js2, tr); err != nil {
			t.Fatal(err)
		}
	}
	cfg.Initial = v1
	r2, err := NewRefresher(js2, cfg)
	if err != nil {
		t.Fatal(err)
	}
	resumed, _, err := r2.Refresh(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(encode(t, v2), encode(t, resumed)) {
		t.Error("the same trajectories recorded in reverse and read at once refresh to another PRM")
	}
}

// A refresh trains only on what Accept accepts: trajectories anyone with a
// stage's credentials published on the run's streams do not reach the PRM
// when the learner would not have trained on them.
func TestRefresherTrainsOnAcceptedTrajectoriesOnly(t *testing.T) {
	ctx := testContext(t)
	_, js := streamstest.Connect(t, streamstest.RunServer(t))
	trajs, _ := prmtest.Decisive("ref1", 1, 120, 5)
	refused := map[string]bool{}
	for i, tr := range trajs {
		if i%3 == 0 {
			refused[tr.ID] = true
		}
	}
	r, err := NewRefresher(js, RefreshConfig{Run: "ref1", Train: prm.TrainConfig{Seed: 1, MaxEpochs: 5},
		Accept: func(tr *schemas.Trajectory) error {
			if refused[tr.ID] {
				return errors.New("refused")
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	record(t, ctx, js, trajs)
	_, rep, err := r.Refresh(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(trajs) - len(refused); rep.Trajectories != want {
		t.Errorf("trained on %d trajectories, want the %d accepted", rep.Trajectories, want)
	}
}
