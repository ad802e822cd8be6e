package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

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
	return fmt.Sprintf("v%d/%s", p.Version(), paramHash(p))
}

// paramHash is the bit hash of p's parameters.
func paramHash(p *policy.Policy) string {
	v := make([]float64, p.NumParams())
	for i := range v {
		v[i] = p.Param(i)
	}
	var h policytest.BitHash
	h.Floats(v...)
	return h.String()
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
	js := openStore(t, dir)
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

// TestExternalRunResumes interrupts an RSPO run with the tilted explorer
// and an external trainer after its third update and starts it again: the learner resumes from its
// checkpoint, the trainer from the version and trainer state in the object
// store, and the final policy is the one an uninterrupted built-in run
// trains.
func TestExternalRunResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	tilted := func() Config { // the tilted explorer: it acts with π_θ as the trainer stored it
		c := smallRun(t, t.TempDir(), true)
		c.Learner.Trainer.Alpha, c.Learner.Explore.Tilt = 0.25, 3
		return c
	}
	whole := tilted()
	sumWhole, err := Run(context.Background(), whole)
	if err != nil {
		t.Fatal(err)
	}
	parts := tilted()
	parts.Learner.TrainerMode = learnersvc.TrainerExternal
	sumParts := runInterrupted(t, parts, 3)
	if a, b := policyHash(t, sumWhole), policyHash(t, sumParts); a != b {
		t.Fatalf("final policy: uninterrupted builtin %s, resumed external %s", a, b)
	}
}

// foreignTrainer is a trainer of the user's own, as one written in another
// language would be: it reads each batch off the wire, "trains" weights
// the built-in policy cannot load, stores them as version v+1 and
// announces them with a model name.
func foreignTrainer(t *testing.T, js jetstream.JetStream, run string) func(context.Context) error {
	return func(ctx context.Context) error {
		return streams.Consume(ctx, js, streams.ConsumerConfig{Stream: streams.StreamBatch, Durable: "foreign-" + run,
			FilterSubject: streams.Subjects(run).Batch, Component: "foreign"},
			streams.Typed(streams.TrainBatches, run, func(ctx context.Context, d streams.Delivery[*schemas.TrainBatch]) error {
				b, next := d.Value, d.Value.PolicyVersion+1
				object := streams.PolicyObject(run, next)
				if err := streams.PutSnapshot(ctx, js, streams.BucketPolicy, object, []byte("safetensors weights")); err != nil {
					return err
				}
				applied, _ := json.Marshal(schemas.BatchApplied{Trainer: "foreign", Batch: b.ID(), FromVersion: b.PolicyVersion})
				_, err := streams.PublishEvent(ctx, js, schemas.Event{Type: schemas.EventPolicyPublished, Run: run,
					PolicyVersion: next, Update: b.Update, Object: object, Model: fmt.Sprintf("lora-%d", next), Config: applied})
				return err
			}))
	}
}

// serveWith runs the learner of cfg against a fresh embedded server, with
// the named stages and extra beside it, and returns the bus and the
// learner's error.
func serveWith(t *testing.T, cfg Config, stages []string, extra func(jetstream.JetStream) func(context.Context) error) (jetstream.JetStream, error) {
	t.Helper()
	emb, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: t.TempDir(), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Shutdown)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	nc, js, err := emb.Connect(ctx, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	if err := streams.Ensure(ctx, js, streams.Options{}); err != nil {
		t.Fatal(err)
	}
	cfg.NATSURL = emb.ClientURL()
	bg, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, name := range stages {
		wg.Go(func() { _ = Serve(bg, cfg, name) })
	}
	wg.Go(func() { _ = extra(js)(bg) })
	err = Serve(ctx, cfg, StageLearner)
	stop()
	wg.Wait()
	return js, err
}

// TestForeignTrainerSnapshots runs a learner whose trainer stores weights
// that are no built-in policy: the learner records the trainer's version
// and model and skips its in-process evaluation, saying why.
func TestForeignTrainerSnapshots(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	cfg := smallRun(t, t.TempDir(), false)
	cfg.Learner.Updates, cfg.Learner.EvalEvery = 1, 1
	cfg.Learner.TrainerMode = learnersvc.TrainerExternal
	var logs bytes.Buffer
	cfg.Logger = slog.New(slog.NewTextHandler(&syncWriter{w: &logs}, nil))
	js, err := serveWith(t, cfg, []string{StageActor}, func(js jetstream.JetStream) func(context.Context) error {
		return foreignTrainer(t, js, "t1")
	})
	if err != nil {
		t.Fatal(err)
	}
	cp, _, err := learnersvc.LoadCheckpoint(context.Background(), js, "t1")
	if err != nil || !cp.Finished || cp.Version != 1 || cp.Model != "lora-1" {
		t.Fatalf("checkpoint %+v (%v): want finished at version 1, model lora-1", cp, err)
	}
	if !strings.Contains(logs.String(), "in-run evaluation skipped") {
		t.Errorf("no log line says why the evaluation was skipped:\n%s", logs.String())
	}
}

// TestForeignTrainerRefusesTrainedExplorer: the explorer that trains π_B
// needs π_θ as a built-in policy; a run whose trainer stores other weights
// fails at its first version, saying so.
func TestForeignTrainerRefusesTrainedExplorer(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	cfg := smallRun(t, t.TempDir(), true)
	cfg.Learner.Trainer.Alpha = 0.25
	cfg.Learner.TrainerMode = learnersvc.TrainerExternal
	_, err := serveWith(t, cfg, []string{StageActor, StageExplorer, StageSwapper, StageBuffer}, func(js jetstream.JetStream) func(context.Context) error {
		return foreignTrainer(t, js, "t1")
	})
	if err == nil || !strings.Contains(err.Error(), "is not a built-in policy") || !strings.Contains(err.Error(), "--explore-tilt") {
		t.Fatalf("got %v, want the run refused with the reason", err)
	}
}

// syncWriter serialises writes of several goroutines' loggers.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// TestTrainerRefusalEndsTheWait: a trainer that dead-letters the batch
// ends the learner's wait at once with the trainer's reason, rather than
// leaving it waiting for a version that will not come.
func TestTrainerRefusalEndsTheWait(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	cfg := smallRun(t, t.TempDir(), false)
	cfg.Learner.TrainerMode = learnersvc.TrainerExternal
	_, err := serveWith(t, cfg, []string{StageActor}, func(js jetstream.JetStream) func(context.Context) error {
		return func(ctx context.Context) error {
			return streams.Consume(ctx, js, streams.ConsumerConfig{Stream: streams.StreamBatch, Durable: "refuser",
				FilterSubject: streams.Subjects("t1").Batch, Component: "refuser"},
				streams.Typed(streams.TrainBatches, "t1", func(context.Context, streams.Delivery[*schemas.TrainBatch]) error {
					return streams.Rejectf("no GPU for this batch")
				}))
		}
	})
	if err == nil || !strings.Contains(err.Error(), "refused the batch of update 1") || !strings.Contains(err.Error(), "no GPU for this batch") {
		t.Fatalf("got %v, want the learner to stop with the trainer's reason", err)
	}
}

// TestShortCyclesAreRecorded runs RSPO with no explorer: the learner waits
// ExploreTimeout for each cycle's exploration, trains on what the buffer
// holds, and records every such cycle in its checkpoint, so that the run's
// summary can say that its updates sampled a short buffer.
func TestShortCyclesAreRecorded(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	cfg := smallRun(t, t.TempDir(), true)
	cfg.Learner.ExploreTimeout = 2 * time.Second
	cfg.Learner.EvalEvery = 4
	js, err := serveWith(t, cfg, []string{StageActor, StageSwapper, StageBuffer}, func(jetstream.JetStream) func(context.Context) error {
		return func(ctx context.Context) error { <-ctx.Done(); return nil }
	})
	if err != nil {
		t.Fatal(err)
	}
	cp, _, err := learnersvc.LoadCheckpoint(context.Background(), js, "t1")
	if err != nil || !cp.Finished {
		t.Fatalf("checkpoint %+v (%v): want a finished run", cp, err)
	}
	if want := []int64{0, 1}; !slices.Equal(cp.ShortCycles, want) {
		t.Fatalf("short cycles %v, want %v (updates 4, K 2, no explorer)", cp.ShortCycles, want)
	}
}
