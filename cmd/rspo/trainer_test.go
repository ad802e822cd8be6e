package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/nats-io/nats.go"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// TestExternalTrainerAsSeparateProcesses runs `serve nats`, the learner
// with --trainer external, actors, explorer, swapper, buffer and `serve
// trainer` as separate processes. Before the learner starts, hostile
// batches wait on the batch stream: one of another run, one with an
// oversized field, one naming a version the run never stored. The trainer
// dead-letters each with its reason and keeps running, the run finishes,
// and every version after 0 is the trainer's.
func TestExternalTrainerAsSeparateProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every stage as a process; skipped with -short")
	}
	const run = "extrain"
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	t.Cleanup(cancel)
	dir, port := t.TempDir(), strconv.Itoa(freePort(t))
	url := "nats://127.0.0.1:" + port
	sc := &stageCluster{t: t, bin: buildRSPO(t), url: url, run: run, dir: dir, ctx: ctx}
	c := &chaosCluster{stageCluster: sc, injected: map[string]int{}, start: time.Now()}
	c.add(busName, "serve", "nats", "--data", filepath.Join(dir, "bus"), "--port", port)
	c.connect()
	stage := func(name string, args ...string) []string {
		return append([]string{"serve", name, "--nats", url, "--run", run}, args...)
	}
	c.add("actor", stage("actor", "--parallel", "2")...)
	c.add("explorer", stage("explorer")...)
	c.add("swapper", stage("swapper")...)
	c.add("buffer", stage("buffer", "--data", filepath.Join(dir, "buffer"))...)
	c.add("trainer", stage("trainer")...)

	hostile := map[string]string{ // what each batch is refused for, as its dead letter says
		"other run": "belongs to run", "oversized": "observation", "forged version": "not in the object store"}
	for name, data := range hostileBatches(t, run) {
		if _, err := c.js.PublishMsg(ctx, &nats.Msg{Subject: streams.Subjects(run).Batch, Data: data}); err != nil {
			t.Fatalf("publish %s batch: %v", name, err)
		}
	}
	args := append(sc.learnerArgs(4), "--trainer", "external")
	out, err := exec.CommandContext(ctx, sc.bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("learner: %v\n%s\n%s", err, out, c.tail(c.member("trainer"), 30))
	}
	c.checkFinished(4)
	if exited, err := c.member("trainer").exited(); exited {
		t.Fatalf("the trainer exited (%v):\n%s", err, c.tail(c.member("trainer"), 30))
	}
	err = streams.Replay(ctx, c.js, streams.ReplayOptions{Run: run, Subject: streams.CtrlKind(schemas.EventPolicyPublished)},
		func(m streams.Message) error {
			if _, ok := schemas.BatchAppliedOf(*m.Event); !ok && m.Event.PolicyVersion > 0 {
				t.Errorf("version %d was not published by the trainer", m.Event.PolicyVersion)
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	err = streams.Replay(ctx, c.js, streams.ReplayOptions{Run: run, Subject: "dlq.trainer"}, func(m streams.Message) error {
		reasons = append(reasons, m.Headers.Get(streams.HeaderDLQReason))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(reasons) != len(hostile) {
		t.Fatalf("dead letters of the trainer: %q, want %d", reasons, len(hostile))
	}
	for name, want := range hostile {
		found := false
		for _, r := range reasons {
			found = found || strings.Contains(r, want)
		}
		if !found {
			t.Errorf("no dead letter for the %s batch (a reason with %q) among %q", name, want, reasons)
		}
	}
}

// hostileBatches are batches a trainer must refuse, by name.
func hostileBatches(t *testing.T, run string) map[string][]byte {
	t.Helper()
	valid := func(b *schemas.TrainBatch) []byte {
		data, err := schemas.EncodeTrainBatch(b)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	batch := func(run string, update, version int64) *schemas.TrainBatch {
		return &schemas.TrainBatch{Run: run, Update: update, PolicyVersion: version, Trainer: json.RawMessage(`{}`),
			Loss: schemas.BatchLoss{Algo: "grpo", EpsOn: 0.2, EpsOff: 0.1, OffRatio: "behaviour", Beta: 0.01, Alpha: 0.25, WeightOn: 1},
			Steps: []schemas.BatchStep{{TrajectoryID: "x", Observation: "You are in a room.", Admissible: []string{"look"},
				Action: "look", BehaviorLogProb: -0.5, Weight: 1}}}
	}
	return map[string][]byte{
		"other run":      valid(batch("someone-else", 1, 0)),
		"forged version": valid(batch(run, 50, 40)),
		"oversized":      oversizedBatch(t, batch(run, 1, 0)),
	}
}

// oversizedBatch writes b's one row with an observation longer than
// schemas.MaxTextBytes, which EncodeTrainBatch would refuse to write.
func oversizedBatch(t *testing.T, b *schemas.TrainBatch) []byte {
	t.Helper()
	schema := schemas.TrainBatchSchema(b)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer rb.Release()
	for i, f := range schema.Fields() {
		switch fb := rb.Field(i).(type) {
		case *array.StringBuilder:
			v := map[string]string{"run": b.Run, "trajectory_id": "x", "action": "look",
				"observation": strings.Repeat("x", schemas.MaxTextBytes+1)}[f.Name]
			fb.Append(v)
		case *array.Int64Builder:
			fb.Append(map[string]int64{"update": b.Update, "policy_version": b.PolicyVersion}[f.Name])
		case *array.Int32Builder:
			fb.Append(0)
		case *array.BooleanBuilder:
			fb.Append(false)
		case *array.Float64Builder:
			fb.Append(map[string]float64{"weight": 1}[f.Name])
		case *array.ListBuilder:
			fb.Append(true)
		default:
			t.Fatalf("column %s: unexpected builder %T", f.Name, fb)
		}
	}
	rec := rb.NewRecord()
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestLearnerRestartedWhileTrainerTrains kills a learner that waits for
// its trainer's answer, lets the trainer (started only then) apply the
// batch, and starts the learner again: it finds the version stored, does
// not publish the batch again, adopts the trainer's version and finishes
// the run.
func TestLearnerRestartedWhileTrainerTrains(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every stage as a process; skipped with -short")
	}
	c := startStages(t, "extrestart")
	args := append(c.learnerArgs(4), "--trainer", "external")
	learner := newProc(t, c.bin, filepath.Join(c.dir, "learner.log"), args...)
	deadline := time.Now().Add(5 * time.Minute)
	for c.batches() < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the learner published no batch")
		}
		time.Sleep(20 * time.Millisecond)
	}
	learner.kill()
	newProc(t, c.bin, filepath.Join(c.dir, "trainer.log"), "serve", "trainer", "--nats", c.url, "--run", c.run)
	for !c.versionAnnounced(1) {
		if time.Now().After(deadline) {
			t.Fatal("the trainer did not announce version 1")
		}
		time.Sleep(20 * time.Millisecond)
	}
	out, err := exec.CommandContext(c.ctx, c.bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("restarted learner: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "version already trained; batch not published again") {
		t.Errorf("the restarted learner did not say it kept from publishing batch 1 again:\n%s", out)
	}
	c.checkFinished(4)
	if n := c.batches(); n != 4 {
		t.Errorf("batches on the stream: %d, want 4", n)
	}
}

// batches counts the run's messages on the batch stream.
func (c *stageCluster) batches() int {
	n := 0
	if err := streams.Replay(c.ctx, c.js, streams.ReplayOptions{Run: c.run, Subject: streams.KindBatch}, func(streams.Message) error {
		n++
		return nil
	}); err != nil {
		c.t.Fatal(err)
	}
	return n
}

// versionAnnounced reports whether a trainer announced policy version v.
func (c *stageCluster) versionAnnounced(v int64) bool {
	seen := false
	if err := streams.Replay(c.ctx, c.js, streams.ReplayOptions{Run: c.run, Subject: streams.CtrlKind(schemas.EventPolicyPublished)},
		func(m streams.Message) error {
			_, ok := schemas.BatchAppliedOf(*m.Event)
			seen = seen || ok && m.Event.PolicyVersion == v
			return nil
		}); err != nil {
		c.t.Fatal(err)
	}
	return seen
}
