package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/policy/policytest"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// policyHash is the bit hash of the parameters of a report's final policy.
func policyHash(t *testing.T, sum Summary) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sum.ReportDir, PolicyFile))
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	v := make([]float64, p.NumParams())
	for i := range v {
		v[i] = p.Param(i)
	}
	var h policytest.BitHash
	h.Floats(v...)
	return fmt.Sprintf("v%d/%s", p.Version(), h.String())
}

// TestExternalTrainerTrainsAsBuiltin runs the same RSPO run twice, once
// with the learner's built-in trainer and once handing every update to the
// reference external trainer over rspo.<run>.batch — the strongest test of
// the batch protocol: the final policies are bit-identical, and so are the
// evaluations. The external run's versions are the trainer's.
func TestExternalTrainerTrainsAsBuiltin(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	builtin := smallRun(t, t.TempDir(), true)
	builtin.Learner.Trainer.Alpha = 0.25
	sumBuiltin, err := Run(context.Background(), builtin)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	external := smallRun(t, dir, true)
	external.Learner.Trainer.Alpha = 0.25
	external.Learner.TrainerMode = learnersvc.TrainerExternal
	sumExternal, err := Run(context.Background(), external)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := policyHash(t, sumBuiltin), policyHash(t, sumExternal); a != b {
		t.Fatalf("final policy: builtin %s, external %s", a, b)
	}
	if fmt.Sprint(sumBuiltin.Final) != fmt.Sprint(sumExternal.Final) {
		t.Errorf("final evaluation: builtin %v, external %v", sumBuiltin.Final, sumExternal.Final)
	}
	emb, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: filepath.Join(dir, "nats"), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Shutdown()
	nc, js, err := emb.Connect(context.Background(), "check")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	trained := map[int64]string{}
	err = streams.Replay(context.Background(), js, streams.ReplayOptions{Run: "t1", Subject: streams.CtrlKind(schemas.EventPolicyPublished)},
		func(m streams.Message) error {
			if a, ok := schemas.BatchAppliedOf(*m.Event); ok {
				trained[m.Event.PolicyVersion] = m.Event.Model + " from " + a.Batch
			} else if m.Event.PolicyVersion != 0 {
				t.Errorf("version %d published by the learner itself", m.Event.PolicyVersion)
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	for v := int64(1); v <= 4; v++ {
		if want := fmt.Sprintf("t1-v%d from t1/batch/%d", v, v); trained[v] != want {
			t.Errorf("version %d: %q, want %q", v, trained[v], want)
		}
	}
	batches := 0
	err = streams.Replay(context.Background(), js, streams.ReplayOptions{Run: "t1", Subject: streams.KindBatch}, func(m streams.Message) error {
		if m.Err != nil {
			return m.Err
		}
		batches++
		return nil
	})
	if err != nil || batches != 4 {
		t.Errorf("batch stream: %d batches (%v), want 4", batches, err)
	}
}

// TestExternalRunResumes interrupts a run with an external trainer after
// its third update and starts it again: the learner resumes from its
// checkpoint, the trainer from the version and trainer state in the object
// store, and the final policy is the one an uninterrupted built-in run
// trains.
func TestExternalRunResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	whole := smallRun(t, t.TempDir(), false)
	sumWhole, err := Run(context.Background(), whole)
	if err != nil {
		t.Fatal(err)
	}
	parts := smallRun(t, t.TempDir(), false)
	parts.Learner.TrainerMode = learnersvc.TrainerExternal
	ctx, cancel := context.WithCancel(context.Background())
	parts.Progress = func(p learnersvc.Progress) {
		if p.Update == 3 {
			cancel()
		}
	}
	if _, err := Run(ctx, parts); err == nil {
		t.Fatal("interrupted run reported success")
	}
	parts.Progress = nil
	sumParts, err := Run(context.Background(), parts)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := policyHash(t, sumWhole), policyHash(t, sumParts); a != b {
		t.Fatalf("final policy: uninterrupted builtin %s, resumed external %s", a, b)
	}
}
