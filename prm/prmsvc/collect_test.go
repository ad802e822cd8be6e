package prmsvc

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
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

// An explorer's records reach the stream in an order that varies from run
// to run; Collect returns them in the order their ids number them, the
// same whatever the arrival, and an actor's in the order recorded.
func TestCollectOrderDoesNotDependOnArrival(t *testing.T) {
	ctx := testContext(t)
	var onPolicy, explored []*schemas.Trajectory
	for u := range 12 { // updates 0..11: "u10" after "u9"
		for seq := range 3 {
			onPolicy = append(onPolicy, labelled(schemas.TrajectoryID("run", schemas.SourceOnPolicy, fmt.Sprintf("u%d-v%d-0", u, u), uint64(seq)), schemas.SourceOnPolicy))
		}
	}
	for c := range 11 {
		for seq := range 12 {
			explored = append(explored, labelled(schemas.TrajectoryID("run", schemas.SourceExplore, fmt.Sprintf("c%d-tilt", c), uint64(seq)), schemas.SourceExplore))
		}
	}
	collect := func(arrival []*schemas.Trajectory) []string {
		_, js := streamstest.Connect(t, streamstest.RunServer(t))
		for _, tr := range onPolicy {
			if _, err := streams.PublishTrajectory(ctx, js, tr); err != nil {
				t.Fatal(err)
			}
		}
		for _, tr := range arrival {
			if _, err := streams.PublishSwapped(ctx, js, tr); err != nil {
				t.Fatal(err)
			}
		}
		trajs, _, err := Collect(ctx, js, []Source{{Run: "run"}})
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]string, len(trajs))
		for i, tr := range trajs {
			ids[i] = tr.ID
		}
		return ids
	}
	var want []string
	for _, tr := range append(slices.Clone(onPolicy), explored...) {
		want = append(want, tr.ID)
	}
	shuffled := slices.Clone(explored)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for name, arrival := range map[string][]*schemas.Trajectory{"in order": explored, "shuffled": shuffled} {
		if got := collect(arrival); !slices.Equal(got, want) {
			t.Errorf("explorer records arriving %s: collected\n%v\nwant\n%v", name, got, want)
		}
	}
}

// labelled is a one-step trajectory with the given id and source.
func labelled(id string, source schemas.Source) *schemas.Trajectory {
	return &schemas.Trajectory{ID: id, Run: "run", Source: source, Swapped: source == schemas.SourceExplore, Env: "synthetic",
		Instruction: "press", Steps: []schemas.Step{{Observation: "a button", Action: "press", Admissible: []string{"press"}, NumAdmissible: 1}}}
}

func TestNaturalCompare(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"r.explore.c2-tilt.9", "r.explore.c2-tilt.10", -1},
		{"r.onpolicy.u9-v9-7.15", "r.onpolicy.u10-v10-0.0", -1},
		{"r.onpolicy.u10-v10-0.0", "r.onpolicy.u10-v10-0.0", 0},
		{"a", "a1", -1},
		{"x01", "x1", 1}, // ids that differ never compare equal
		{"b", "a9", 1},
		{"9", "a", -1},
	} {
		if got := NaturalCompare(c.a, c.b); got != c.want {
			t.Errorf("NaturalCompare(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := NaturalCompare(c.b, c.a); got != -c.want {
			t.Errorf("NaturalCompare(%q, %q) = %d, want %d", c.b, c.a, got, -c.want)
		}
	}
}

// FuzzNaturalCompare: ids come from the stream, so from anyone; the order
// must be antisymmetric and call only equal ids equal, whatever they hold.
func FuzzNaturalCompare(f *testing.F) {
	f.Add("r.explore.c2-tilt.9", "r.explore.c2-tilt.10")
	f.Add("x007", "x7")
	f.Add("", "0")
	f.Fuzz(func(t *testing.T, a, b string) {
		ab, ba := NaturalCompare(a, b), NaturalCompare(b, a)
		if ab != -ba || (ab == 0) != (a == b) {
			t.Errorf("NaturalCompare(%q, %q) = %d, reversed %d", a, b, ab, ba)
		}
	})
}

// Ids with their requesters' nonces (schemas.WithNonce) sort naturally as
// the same ids without them: a PRM trained on collected trajectories sees
// them in the order it did before nonces, whatever the nonces.
func TestNaturalOrderIgnoresNonces(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	type id struct{ plain, nonced string }
	var ids []id
	for _, p := range []string{"u9-v9-0", "u10-v10-0", "u10-v10-1", "u9-v8-1", "c2-tilt", "c2-u1", "c2-u10", "c10-final"} {
		n := fmt.Sprintf("%x", rng.Uint64())
		for _, seq := range []uint64{0, 1, 9, 10, 100} {
			plain := schemas.TrajectoryID("r", schemas.SourceExplore, p, seq)
			ids = append(ids, id{plain, schemas.WithNonce(plain, n)})
		}
	}
	rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	a, b := slices.Clone(ids), slices.Clone(ids)
	slices.SortStableFunc(a, func(x, y id) int { return NaturalCompare(x.plain, y.plain) })
	slices.SortStableFunc(b, func(x, y id) int { return NaturalCompare(x.nonced, y.nonced) })
	if !slices.Equal(a, b) {
		t.Errorf("nonces changed the natural order:\n%v\n%v", a, b)
	}
}
