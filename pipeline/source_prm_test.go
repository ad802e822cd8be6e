package pipeline

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// sourceBus is a server whose run "src" recorded n on-policy trajectories.
func sourceBus(t *testing.T, n int) jetstream.JetStream {
	t.Helper()
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	if err := streams.Ensure(context.Background(), js, streams.Options{}); err != nil {
		t.Fatal(err)
	}
	publishSource(t, js, 0, n)
	return js
}

// publishSource records trajectories lo..hi−1 of run "src".
func publishSource(t *testing.T, js jetstream.JetStream, lo, hi int) {
	t.Helper()
	for i := lo; i < hi; i++ {
		if _, err := streams.PublishTrajectory(context.Background(), js, streamstest.Trajectory("src", schemas.SourceOnPolicy, uint64(i))); err != nil {
			t.Fatal(err)
		}
	}
}

// sourceTarget is the configuration of a new run name with PRM source "src";
// its log goes to log.
func sourceTarget(run string, seed int64, log *bytes.Buffer) Config {
	return Config{Sources: []string{"src"}, Learner: learnersvc.Config{Run: run, Seed: seed},
		Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelInfo}))}
}

func snapshotOf(t *testing.T, m *prm.Model) []byte {
	t.Helper()
	b, err := prm.EncodeSnapshot(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func recordOf(t *testing.T, js jetstream.JetStream, run string) SourcePRM {
	t.Helper()
	rec, err := loadSourcePRMRecord(context.Background(), js, run)
	if err != nil || rec == nil {
		t.Fatalf("record of %s: %v, %v", run, rec, err)
	}
	return *rec
}

// The first run on a set of sources trains their PRM and stores it; a run
// of another seed on the same sources loads the very same model, and each
// run's record says which happened.
func TestSourcePRMIsTrainedOnceAndReused(t *testing.T) {
	ctx := context.Background()
	js := sourceBus(t, 24)
	var log bytes.Buffer
	m1, err := sourcePRM(ctx, js, sourceTarget("t1", 7, &log))
	if err != nil {
		t.Fatal(err)
	}
	rec1 := recordOf(t, js, "t1")
	if rec1.Reused || rec1.Report.Trajectories != 24 || !strings.HasPrefix(rec1.Object, sourcePRMPrefix) {
		t.Errorf("first record %+v: want trained here on 24 trajectories under %s", rec1, sourcePRMPrefix)
	}
	if p := rec1.Provenance; p.Seed != SourcePRMSeed || p.Target != prm.TargetStep || p.LastSeq["src/traj.onpolicy"] != 24 || len(p.LastSeq) != 1 {
		t.Errorf("provenance %+v: want seed %d, target step, last seq 24 of src/traj.onpolicy only", p, SourcePRMSeed)
	}
	m2, err := sourcePRM(ctx, js, sourceTarget("t2", 9, &log))
	if err != nil {
		t.Fatal(err)
	}
	rec2 := recordOf(t, js, "t2")
	if !rec2.Reused || rec2.Object != rec1.Object {
		t.Errorf("second record %+v: want %s reused", rec2, rec1.Object)
	}
	if !bytes.Equal(snapshotOf(t, m1), snapshotOf(t, m2)) {
		t.Error("the second run's PRM differs from the stored one")
	}
	if got := strings.Count(log.String(), "PRM trained on the source runs"); got != 1 {
		t.Errorf("trained %d times, want once:\n%s", got, log.String())
	}
	// What it stored is what training with the provenance's settings gives.
	var trajs []*schemas.Trajectory
	for i := range 24 {
		trajs = append(trajs, streamstest.Trajectory("src", schemas.SourceOnPolicy, uint64(i)))
	}
	want, _, err := prm.Train(ctx, trajs, prm.TrainConfig{Target: prm.TargetStep, Seed: SourcePRMSeed})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(snapshotOf(t, want), snapshotOf(t, m1)) {
		t.Error("the stored PRM is not Train's on the sources with SourcePRMSeed")
	}
}

// A source that recorded more, or another featurizer, is another
// provenance: trained anew, not the stored model.
func TestSourcePRMProvenanceChanges(t *testing.T) {
	ctx := context.Background()
	js := sourceBus(t, 24)
	var log bytes.Buffer
	if _, err := sourcePRM(ctx, js, sourceTarget("t1", 1, &log)); err != nil {
		t.Fatal(err)
	}
	first := recordOf(t, js, "t1").Object

	ctxFeat, err := prm.NewHashProjection(prm.HashProjectionConfig{ActionContext: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg := sourceTarget("t2", 1, &log)
	cfg.Learner.PRMTrain.Featurizer = ctxFeat
	if _, err := sourcePRM(ctx, js, cfg); err != nil {
		t.Fatal(err)
	}
	if rec := recordOf(t, js, "t2"); rec.Reused || rec.Object == first {
		t.Errorf("other featurizer: %s reused %v; want a new object, trained", rec.Object, rec.Reused)
	}

	publishSource(t, js, 24, 32)
	if _, err := sourcePRM(ctx, js, sourceTarget("t3", 1, &log)); err != nil {
		t.Fatal(err)
	}
	if rec := recordOf(t, js, "t3"); rec.Reused || rec.Object == first || rec.Report.Trajectories != 32 {
		t.Errorf("more source data: %s reused %v on %d trajectories; want a new object trained on 32", rec.Object, rec.Reused, rec.Report.Trajectories)
	}
}

// A stored snapshot that does not decode, or whose record is missing, is
// trained again and overwritten, never used.
func TestSourcePRMUnusableStoreIsRetrained(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		spoil func(js jetstream.JetStream, object string) error
	}{
		{"corrupt snapshot", func(js jetstream.JetStream, object string) error {
			return streams.PutSnapshot(ctx, js, streams.BucketPRM, object, []byte("not a snapshot"))
		}},
		{"missing record", func(js jetstream.JetStream, object string) error {
			obs, err := js.ObjectStore(ctx, streams.BucketPRM)
			if err != nil {
				return err
			}
			return obs.Delete(ctx, object+".json")
		}},
		{"record of another provenance", func(js jetstream.JetStream, object string) error {
			return streams.PutSnapshot(ctx, js, streams.BucketPRM, object+".json", []byte(`{"object":"`+object+`","provenance":{"seed":99}}`))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js := sourceBus(t, 24)
			var log bytes.Buffer
			m1, err := sourcePRM(ctx, js, sourceTarget("t1", 1, &log))
			if err != nil {
				t.Fatal(err)
			}
			object := recordOf(t, js, "t1").Object
			if err := tt.spoil(js, object); err != nil {
				t.Fatal(err)
			}
			m2, err := sourcePRM(ctx, js, sourceTarget("t2", 1, &log))
			if err != nil {
				t.Fatal(err)
			}
			if rec := recordOf(t, js, "t2"); rec.Reused {
				t.Error("an unusable store was reused")
			}
			if !strings.Contains(log.String(), "unusable") {
				t.Errorf("no warning logged:\n%s", log.String())
			}
			if !bytes.Equal(snapshotOf(t, m1), snapshotOf(t, m2)) {
				t.Error("the retrained PRM differs from the first")
			}
			if _, err := sourcePRM(ctx, js, sourceTarget("t3", 1, &log)); err != nil {
				t.Fatal(err)
			}
			if rec := recordOf(t, js, "t3"); !rec.Reused {
				t.Error("the overwritten store was not reused by the next run")
			}
		})
	}
}
