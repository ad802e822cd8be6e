package trainersvc

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/envs"
	_ "github.com/rspo-dev/rspo/envs/household"
	"github.com/rspo-dev/rspo/learner"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

const run = "tr1"

func startBus(t *testing.T) jetstream.JetStream {
	t.Helper()
	e, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: t.TempDir(), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Shutdown)
	nc, js, err := e.Connect(context.Background(), "trainersvc-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	if err := streams.Ensure(context.Background(), js, streams.Options{}); err != nil {
		t.Fatal(err)
	}
	return js
}

// rollouts plays n episodes of each of 3 easy household tasks with p.
func rollouts(t *testing.T, p *policy.Policy, seed int64) []*schemas.Trajectory {
	t.Helper()
	env, err := envs.New("household", map[string]string{"preset": "easy"})
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := env.Tasks(envs.SplitTrain, 3, seed)
	if err != nil {
		t.Fatal(err)
	}
	var out []*schemas.Trajectory
	for i, task := range tasks {
		for j := range 4 {
			tr, err := policy.Rollout(context.Background(), env, task, p, policy.RolloutOptions{
				Seed: seed*1000 + int64(i*10+j), GroupID: fmt.Sprintf("%s/%d", task.ID, seed), Source: schemas.SourceOnPolicy})
			if err != nil {
				t.Fatal(err)
			}
			tr.Run = run
			out = append(out, tr)
		}
	}
	return out
}

// publish publishes b with a message id of its own, so that the same batch
// sent again is stored again (a redelivery beyond the dedupe window).
func publish(t *testing.T, js jetstream.JetStream, b *schemas.TrainBatch, id string) {
	t.Helper()
	data, err := schemas.EncodeTrainBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	msg := &nats.Msg{Subject: streams.Subjects(run).Batch, Data: data, Header: nats.Header{}}
	msg.Header.Set(jetstream.MsgIDHeader, id)
	if _, err := js.PublishMsg(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
}

// announced waits for the trainer's policy.published events until n have
// arrived, and returns them.
func announced(t *testing.T, js jetstream.JetStream, n int) []schemas.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var got []schemas.Event
	done := fmt.Errorf("done")
	err := streams.Replay(ctx, js, streams.ReplayOptions{Run: run, Subject: streams.CtrlKind(schemas.EventPolicyPublished), Follow: true},
		func(m streams.Message) error {
			if _, ok := schemas.BatchAppliedOf(*m.Event); ok {
				got = append(got, *m.Event)
			}
			if len(got) == n {
				return done
			}
			return nil
		})
	if err != done {
		t.Fatalf("waiting for %d announcements: got %d (%v)", n, len(got), err)
	}
	return got
}

// TestTrainerAppliesAndResumes publishes two updates' batches to trainers
// that restart between them, and a batch again: the trainer's versions are
// bit for bit those of one built-in trainer making both updates, the second
// trainer resumes from the stored version and trainer state, and the
// repeated batch is announced again without training.
func TestTrainerAppliesAndResumes(t *testing.T) {
	js := startBus(t)
	cfg := learner.Config{Epochs: 2, Seed: 5}
	p0, err := policy.New(policy.Config{Buckets: 256, EmbedDim: 3, Hidden: 4, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := p0.MarshalBinary()
	if err := streams.PutSnapshot(context.Background(), js, streams.BucketPolicy, streams.PolicyObject(run, 0), snap); err != nil {
		t.Fatal(err)
	}
	builtin, _ := learner.New(p0.Clone(), cfg)
	assembler, _ := learner.New(p0.Clone(), cfg)
	var batches []*schemas.TrainBatch
	for u := range int64(2) {
		on := rollouts(t, builtin.Policy(), 20+u)
		b, err := assembler.Assemble(on, nil)
		if err != nil {
			t.Fatal(err)
		}
		assembler.SetUpdates(u + 1)
		w, err := b.Export(run, u)
		if err != nil {
			t.Fatal(err)
		}
		batches = append(batches, w)
		if _, err := builtin.Update(on, nil); err != nil {
			t.Fatal(err)
		}
	}
	serve := func(ctx context.Context) (*Service, chan error) {
		svc, err := New(js, Config{Run: run, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- svc.Run(ctx) }()
		return svc, done
	}
	ctx1, stop1 := context.WithCancel(context.Background())
	first, done1 := serve(ctx1)
	publish(t, js, batches[0], "b1")
	announced(t, js, 1)
	stop1()
	if err := <-done1; err != nil {
		t.Fatal(err)
	}
	ctx2, stop2 := context.WithCancel(context.Background())
	defer stop2()
	second, _ := serve(ctx2)
	publish(t, js, batches[1], "b2")
	publish(t, js, batches[0], "b1-again")
	events := announced(t, js, 2) // announcing version 1 again stores nothing new: its event id dedupes
	if n := first.Counts(); n.Applied != 1 {
		t.Errorf("first trainer: %+v, want 1 applied", n)
	}
	deadline := time.Now().Add(10 * time.Second)
	for second.Counts().Reannounced == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := second.Counts(); n.Applied != 1 || n.Reannounced != 1 || n.Rejected != 0 {
		t.Errorf("second trainer: %+v, want 1 applied, 1 announced again", n)
	}
	last := events[1]
	if last.PolicyVersion != 2 || last.Model != "tr1-v2" || last.Update != 2 {
		t.Errorf("second announcement: %+v", last)
	}
	b, err := streams.GetSnapshot(context.Background(), js, streams.BucketPolicy, streams.PolicyObject(run, 2))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := builtin.Policy().MarshalBinary()
	if string(b) != string(want) {
		t.Fatal("version 2 as the trainers stored it differs from the built-in trainer's")
	}
}
