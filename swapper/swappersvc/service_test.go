package swappersvc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
	"github.com/rspo-dev/rspo/swapper"
	"github.com/rspo-dev/rspo/swapper/swappertest"
)

func startService(t *testing.T, js jetstream.JetStream, cfg Config) *Service {
	t.Helper()
	cfg.Logger = slog.New(slog.DiscardHandler)
	svc, err := New(js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- svc.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("Run returned %v, want nil after cancel", err)
		}
	})
	return svc
}

func TestServiceSwapsAndDeadLettersBadInput(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	sub := streams.Subjects("r")
	svc := startService(t, js, Config{Run: "r", Verify: true, Batch: 4})

	honest := []*schemas.Trajectory{
		swappertest.PlayCounter(t, 2, "inc", "inc", "stop"),
		swappertest.PlayCounter(t, 3, "inc", "stop"),
		swappertest.PlayCounter(t, 4, "inc", "dec", "inc"),
	}
	forged := swappertest.PlayCounter(t, 5, "inc", "stop")
	forged.ID, forged.OutcomeReward, forged.Success = "r/forged", 1, true
	onPolicy := swappertest.PlayCounter(t, 6, "stop")
	onPolicy.ID, onPolicy.Source = "r/onpolicy-on-explore-subject", schemas.SourceExplore
	onPolicy.Swapped = true
	otherRun := swappertest.PlayCounter(t, 7, "stop")
	otherRun.ID, otherRun.Run = "r/other-run", "other"
	synthetic := swappertest.Explorer("r", 1, 0, 4)

	bad := []struct {
		name, reason string
		data         []byte
	}{
		{"bad arrow", "cannot decode", []byte("definitely not arrow")},
		{"wrong schema version", "schema version", swappertest.WithSchemaVersion(honest[0], "2")},
		{"NaN reward", "reward", swappertest.WithNaNReward(honest[1])},
		{"forged success", "disproved by replay", swappertest.Encode(forged)},
		{"already swapped", "already swapped", swappertest.Encode(onPolicy)},
		{"other run", "belongs to run", swappertest.Encode(otherRun)},
		{"unverifiable env", "cannot verify", swappertest.Encode(synthetic)},
	}
	publishRaw := func(id string, data []byte) {
		h := nats.Header{streams.HeaderRun: {"r"}, streams.HeaderMsgID: {id}}
		if _, err := streams.Publish(ctx, js, sub.TrajExplore, data, h); err != nil {
			t.Fatal(err)
		}
	}
	publishRaw("first-honest", swappertest.Encode(honest[0]))
	for _, b := range bad {
		publishRaw(b.name, b.data)
	}
	for _, h := range honest[1:] {
		if _, err := streams.PublishTrajectory(ctx, js, h); err != nil {
			t.Fatal(err)
		}
	}

	got := waitMessages(t, js, streams.StreamSwapped, sub.Swapped, len(honest))
	byID := map[string]*schemas.Trajectory{}
	for _, h := range honest {
		byID[h.ID] = h
	}
	for i, m := range got {
		rec, err := schemas.DecodeTrajectory(m.Data)
		if err != nil {
			t.Fatalf("swapped record %d: %v", i, err)
		}
		want, _ := swapper.Relabel(byID[rec.ID])
		if fmt.Sprint(rec) != fmt.Sprint(want) {
			t.Errorf("swapped record %d:\ngot  %+v\nwant %+v", i, rec, want)
		}
		if !bytes.Equal(m.Data, swappertest.Encode(want)) {
			t.Errorf("swapped record %d is not byte for byte the encoding of the relabelled trajectory", i)
		}
		if id := m.Header.Get(streams.HeaderMsgID); id != rec.ID {
			t.Errorf("record %d has Nats-Msg-Id %q, want the trajectory id %q", i, id, rec.ID)
		}
	}
	dead := map[string]string{}
	for _, m := range waitMessages(t, js, streams.StreamDLQ, sub.DLQ(Component), len(bad)) {
		dead[m.Header.Get(streams.HeaderDLQMsgID)] = m.Header.Get(streams.HeaderDLQReason)
	}
	for _, b := range bad {
		if reason := dead[b.name]; !strings.Contains(reason, b.reason) {
			t.Errorf("%s: dead-letter reason %q, want it to mention %q", b.name, reason, b.reason)
		}
	}
	if c := svc.Counters(); c.Swapped != 3 || c.Rejected != int64(len(bad)) || c.Encoded != 0 {
		t.Errorf("counters %+v, want 3 swapped (relabelled in their bytes, none encoded) and %d rejected", c, len(bad))
	}
}

// TestServiceEncodesMessagesItCannotPatch: an explorer message written by
// another Arrow writer (here with a compressed body) is valid, but not in
// the shape the swapper relabels in place: its record is encoded afresh.
func TestServiceEncodesMessagesItCannotPatch(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	sub := streams.Subjects("r")
	svc := startService(t, js, Config{Run: "r"})
	tr := swappertest.PlayCounter(t, 2, "inc", "inc", "stop")
	data := lz4Stream(t, swappertest.Encode(tr))
	if _, err := schemas.DecodeTrajectory(data); err != nil {
		t.Fatalf("the compressed message does not decode: %v", err)
	}
	if _, err := streams.Publish(ctx, js, sub.TrajExplore, data, streams.TrajectoryHeaders(tr)); err != nil {
		t.Fatal(err)
	}
	got := waitMessages(t, js, streams.StreamSwapped, sub.Swapped, 1)
	want, err := swapper.Relabel(tr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[0].Data, swappertest.Encode(want)) {
		t.Error("the record is not the encoding of the relabelled trajectory")
	}
	if c := svc.Counters(); c.Swapped != 1 || c.Encoded != 1 {
		t.Errorf("counters %+v, want 1 swapped and encoded", c)
	}
}

// lz4Stream rewrites an Arrow IPC stream with LZ4-compressed bodies.
func lz4Stream(t *testing.T, data []byte) []byte {
	t.Helper()
	r, err := ipc.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	var out bytes.Buffer
	w := ipc.NewWriter(&out, ipc.WithSchema(r.Schema()), ipc.WithLZ4())
	for r.Next() {
		if err := w.Write(r.Record()); err != nil {
			t.Fatal(err)
		}
	}
	if err := errors.Join(r.Err(), w.Close()); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestServiceRepublishIsDeduplicated(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	tr := swappertest.Explorer("r", 0, 1, 8)
	startService(t, js, Config{Run: "r"})
	for range 2 {
		// A producer retrying after a lost ack publishes twice; the stream
		// dedupes by id. Publishing raw bytes under a new id simulates the
		// duplicate getting through, which the swapper's own publish dedupes.
		if _, err := streams.Publish(ctx, js, streams.Subjects("r").TrajExplore, swappertest.Encode(tr),
			nats.Header{streams.HeaderMsgID: {fmt.Sprint(time.Now().UnixNano())}}); err != nil {
			t.Fatal(err)
		}
	}
	waitConsumerDone(t, js, streams.StreamTraj, "swapper-r")
	st, err := js.Stream(ctx, streams.StreamSwapped)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 {
		t.Errorf("swapped stream holds %d records, want 1", info.State.Msgs)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no run", Config{}, "run"},
		{"dotted run", Config{Run: "a.b"}, "run"},
		{"workers", Config{Run: "r", Workers: -1}, "workers"},
		{"batch", Config{Run: "r", Batch: 5000}, "batch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(nil, tt.cfg)
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want ErrInvalidConfig mentioning %q", err, tt.want)
			}
		})
	}
}

// waitMessages waits until subject holds n messages and returns them in order.
func waitMessages(t *testing.T, js jetstream.JetStream, stream, subject string, n int) []*jetstream.RawStreamMsg {
	t.Helper()
	ctx := context.Background()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	var info *jetstream.StreamInfo
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		info, err = st.Info(ctx, jetstream.WithSubjectFilter(subject))
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Subjects[subject] >= uint64(n) {
			break
		}
	}
	if got := info.State.Subjects[subject]; got != uint64(n) {
		t.Fatalf("%s holds %d messages, want %d", subject, got, n)
	}
	var out []*jetstream.RawStreamMsg
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err == nil && m.Subject == subject {
			out = append(out, m)
		}
	}
	return out
}

// waitConsumerDone waits until the durable has acknowledged everything.
func waitConsumerDone(t *testing.T, js jetstream.JetStream, stream, durable string) {
	t.Helper()
	ctx := context.Background()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		c, err := js.Consumer(ctx, stream, durable)
		if err != nil {
			continue
		}
		info, err := c.Info(ctx)
		if err == nil && info.NumPending == 0 && info.NumAckPending == 0 && info.Delivered.Consumer > 0 {
			return
		}
	}
	t.Fatalf("consumer %s did not finish", durable)
}

// Without verification, a trajectory of an environment no process can
// replay used to be stored as the success it claimed; so did one of
// another environment than its cycle's plan.
func TestServiceRefusesTrajectoriesOfUnknownOrUnplannedEnvironments(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	sub := streams.Subjects("r")
	plan := schemas.CyclePlan{Env: swappertest.CounterEnv, Tasks: []schemas.TaskRef{{ID: "count/1"}}, ExploreSettings: schemas.ExploreSettings{GroupSize: 1, Collect: 1}}
	raw, _ := json.Marshal(plan)
	if _, err := streams.AnnounceCycle(ctx, js, schemas.Event{Type: schemas.EventCycleStarted, Run: "r", Cycle: 1, Config: raw,
		Time: time.Unix(1700000000, 0).UTC()}); err != nil {
		t.Fatal(err)
	}
	startService(t, js, Config{Run: "r", Batch: 4})
	unknown := swappertest.Explorer("r", 2, 0, 4)
	unknown.ID, unknown.Env = "r/unknown-env", "no-such-env"
	unplanned := swappertest.Explorer("r", 1, 1, 4) // cycle 1 explores the counter env
	unplanned.ID = "r/unplanned-env"
	honest := swappertest.PlayCounter(t, 3, "inc", "stop") // cycle 1, the counter env
	for _, tr := range []*schemas.Trajectory{unknown, unplanned, honest} {
		if _, err := streams.PublishTrajectory(ctx, js, tr); err != nil {
			t.Fatal(err)
		}
	}
	waitMessages(t, js, streams.StreamSwapped, sub.Swapped, 1)
	var reasons []string
	for _, m := range waitMessages(t, js, streams.StreamDLQ, sub.DLQ(Component), 2) {
		reasons = append(reasons, m.Header.Get(streams.HeaderDLQReason))
	}
	all := strings.Join(reasons, "\n")
	for _, want := range []string{unknown.ID + ` of unknown environment "no-such-env"`, unplanned.ID + ` of environment "synthetic" in cycle 1, which its plan explores in`} {
		if !strings.Contains(all, want) {
			t.Errorf("dead-letter reasons %q, want one to mention %q", reasons, want)
		}
	}
}

// A cycle.started published after the learner's for the same cycle, with
// another plan, used to replace the learner's plan in the swapper (the
// latest event of a cycle was its plan): naming another environment, it
// had every genuine trajectory of the cycle dead-lettered. A forged far
// cycle's plan stayed in memory for good. The swapper takes only the
// plans the learner's cycle record holds, running or started afterwards.
func TestSwapperTakesOnlyTheLearnersPlans(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	sub := streams.Subjects("r")
	genuine := schemas.CyclePlan{Env: swappertest.CounterEnv, Tasks: []schemas.TaskRef{{ID: "count/1"}}, ExploreSettings: schemas.ExploreSettings{GroupSize: 1, Collect: 1, Verify: true}}
	forged := genuine
	forged.Env, forged.Verify = "household", false
	started := func(cycle int64, plan schemas.CyclePlan) schemas.Event {
		raw, _ := json.Marshal(plan)
		return schemas.Event{Type: schemas.EventCycleStarted, Run: "r", Cycle: cycle, Config: raw, Time: time.Unix(1700000000, 0).UTC()}
	}
	if _, err := streams.AnnounceCycle(ctx, js, started(1, genuine)); err != nil {
		t.Fatal(err)
	}
	for _, e := range []schemas.Event{started(1, forged), started(9000000000000000000, forged)} {
		e.Update = 7 // another message id than the learner's event's
		if _, err := streams.PublishEvent(ctx, js, e); err != nil {
			t.Fatal(err)
		}
	}
	startService(t, js, Config{Run: "r", Batch: 4})
	for seed := range int64(2) {
		if _, err := streams.PublishTrajectory(ctx, js, swappertest.PlayCounter(t, 3+seed, "inc", "stop")); err != nil {
			t.Fatal(err)
		}
	}
	waitMessages(t, js, streams.StreamSwapped, sub.Swapped, 2)
	waitConsumerDone(t, js, streams.StreamTraj, "swapper-r")
	waitMessages(t, js, streams.StreamDLQ, sub.DLQ(Component), 0) // none judged by a forged plan
	later, err := New(js, Config{Run: "r", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := later.plans.load(ctx, []int64{1, 9000000000000000000}); err != nil {
		t.Fatal(err)
	}
	if plan, ok := later.plans.get(1); !ok || plan.Env != genuine.Env || !plan.Verify {
		t.Errorf("a swapper started afterwards: cycle 1's plan %+v (found %v), want the learner's", plan, ok)
	}
	if _, ok := later.plans.get(9000000000000000000); ok || len(later.plans.plans) != 1 {
		t.Errorf("a swapper started afterwards keeps %d plans, the far cycle's among them (%v)", len(later.plans.plans), ok)
	}
}
