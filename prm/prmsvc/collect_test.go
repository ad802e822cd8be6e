package prmsvc

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/prm/prmtest"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// record publishes trajs of a run: every third as a swapped explorer record,
// the rest as on-policy trajectories.
func record(t *testing.T, ctx context.Context, js jetstream.JetStream, trajs []*schemas.Trajectory) {
	t.Helper()
	for i, tr := range trajs {
		var err error
		if i%3 == 2 {
			tr.Source, tr.Swapped = schemas.SourceExplore, true
			_, err = streams.PublishSwapped(ctx, js, tr)
		} else {
			_, err = streams.PublishTrajectory(ctx, js, tr)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestTrainFromReplayedStream trains a PRM from two recorded runs read back
// through streams' replay, and checks it learned the decisive step.
func TestTrainFromReplayedStream(t *testing.T) {
	ctx := testContext(t)
	_, js := streamstest.Connect(t, streamstest.RunServer(t))
	a, _ := prmtest.Decisive("runA", 1, 150, 6)
	b, _ := prmtest.Decisive("runB", 2, 150, 6)
	record(t, ctx, js, a)
	record(t, ctx, js, b)
	record(t, ctx, js, a[:5]) // a retry: deduplicated by the stream

	trajs, st, err := Collect(ctx, js, []Source{{Run: "runA"}, {Run: "runB"}})
	if err != nil {
		t.Fatal(err)
	}
	if st.Trajectories != 300 || len(trajs) != 300 || st.Undecodable != 0 {
		t.Fatalf("collected %d (stats %+v), want 300", len(trajs), st)
	}
	swapped := 0
	for _, tr := range trajs {
		if tr.Swapped {
			swapped++
		}
	}
	if swapped != 100 {
		t.Errorf("swapped records: got %d, want 100", swapped)
	}
	m, rep, err := prm.Train(ctx, trajs, prm.TrainConfig{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.HeldoutEval.AUC < 0.95 {
		t.Errorf("held-out AUC: got %.3f, want ≥ 0.95", rep.HeldoutEval.AUC)
	}
	test, decisive := prmtest.Decisive("runC", 3, 20, 6)
	for i, tr := range test {
		r := m.ScoreSteps(tr)
		for k := range r {
			if tr.Success && k != decisive[i] && r[k] >= r[decisive[i]] {
				t.Errorf("trajectory %d: step %d scores %.3f ≥ the decisive step's %.3f", i, k, r[k], r[decisive[i]])
			}
		}
	}

	later, _, err := Collect(ctx, js, []Source{{Run: "runA", FromSeq: st.LastSeq["runA/traj.onpolicy"] + 1, Subjects: []streams.SubjectKind{"traj.onpolicy"}}})
	if err != nil || len(later) != 0 {
		t.Errorf("collect from after the last sequence: got %d trajectories (%v), want 0", len(later), err)
	}
}

func TestCollectErrors(t *testing.T) {
	ctx := testContext(t)
	_, js := streamstest.Connect(t, streamstest.RunServer(t))
	tests := []struct {
		name    string
		sources []Source
	}{
		{"no sources", nil},
		{"bad run name", []Source{{Run: "a.b"}}},
		{"unknown subject", []Source{{Run: "a", Subjects: []streams.SubjectKind{"nope"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := Collect(ctx, js, tt.sources); err == nil {
				t.Error("got nil, want an error")
			}
		})
	}
}
