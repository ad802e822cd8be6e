package prmsvc

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/prm/prmtest"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

func TestPublishAndLoad(t *testing.T) {
	ctx := testContext(t)
	_, js := streamstest.Connect(t, streamstest.RunServer(t))
	m := prm.Random(3)
	m.Version = 5
	m.Info = prm.ModelInfo{Trained: true, Heldout: 10, HeldoutSuccesses: 3, HeldoutAUC: 0.75}
	e, err := Publish(ctx, js, "pub1", m, PublishOptions{Cycle: 2, Metrics: map[string]float64{"extra": 1}})
	if err != nil {
		t.Fatal(err)
	}
	if e.Object != streams.PRMObject("pub1", 5) || e.PRMVersion != 5 || e.Cycle != 2 {
		t.Errorf("event: got object %q version %d cycle %d", e.Object, e.PRMVersion, e.Cycle)
	}
	if e.Metrics["heldout_auc"] != 0.75 || e.Metrics["extra"] != 1 {
		t.Errorf("event metrics: got %v, want heldout_auc 0.75 and extra 1", e.Metrics)
	}
	var stored []schemas.Event
	err = streams.Replay(ctx, js, streams.ReplayOptions{Run: "pub1", Subject: "ctrl.prm.published"}, func(msg streams.Message) error {
		stored = append(stored, *msg.Event)
		return nil
	})
	if err != nil || len(stored) != 1 || stored[0].PRMVersion != 5 {
		t.Fatalf("stored events: got %+v (%v), want one for version 5", stored, err)
	}
	got, err := LoadEvent(ctx, js, stored[0])
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 5 || got.Info != m.Info {
		t.Errorf("loaded: got version %d info %+v", got.Version, got.Info)
	}
	if _, err := Load(ctx, js, "pub1", 6); !errors.Is(err, jetstream.ErrObjectNotFound) {
		t.Errorf("missing version: got %v, want ErrObjectNotFound", err)
	}
	wrong := stored[0]
	wrong.PRMVersion = 4
	if _, err := LoadEvent(ctx, js, wrong); !errors.Is(err, ErrVersionMismatch) {
		t.Errorf("event for another version: got %v, want ErrVersionMismatch", err)
	}
}

// TestServiceReloadsOnPublished checks that a running service swaps in a
// version announced by prm.published, and on start picks up the latest one
// published before it.
func TestServiceReloadsOnPublished(t *testing.T) {
	ctx := testContext(t)
	s := streamstest.RunServer(t)
	nc, js := streamstest.Connect(t, s)
	early := prm.Random(1)
	early.Version = 2
	if _, err := Publish(ctx, js, "rel1", early, PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	svc, err := New(nc, js, Config{Run: "rel1", Model: prm.Random(9), Reload: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer svc.Stop()
	clientConn, _ := streamstest.Connect(t, s)
	client, _ := NewClient(clientConn, "rel1")
	trajs, _ := prmtest.Decisive("rel1", 1, 1, 4)
	waitVersion(t, client, trajs, 2)

	later := prm.Random(2)
	later.Version = 3
	if _, err := Publish(ctx, js, "rel1", later, PublishOptions{Cycle: 1}); err != nil {
		t.Fatal(err)
	}
	reply := waitVersion(t, client, trajs, 3)
	if want := later.ScoreSteps(trajs[0]); reply.Scores[0][0] != want[0] {
		t.Errorf("after reload: got %v, want the new model's %v", reply.Scores[0][0], want[0])
	}
}

// waitVersion polls until the service answers with version want.
func waitVersion(t *testing.T, c *Client, trajs []*schemas.Trajectory, want int64) ScoreReply {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		reply, err := c.Score(testContext(t), trajs)
		if err == nil && reply.PRMVersion == want {
			return reply
		}
		if time.Now().After(deadline) {
			t.Fatalf("service never served version %d (last: %+v, %v)", want, reply.PRMVersion, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Garbage on prm.published used to be logged and skipped; it is
// dead-lettered with its reason, and the service keeps serving its model.
func TestServiceDeadLettersBadPublishedEvents(t *testing.T) {
	ctx := testContext(t)
	s := streamstest.RunServer(t)
	nc, js := streamstest.Connect(t, s)
	svc, err := New(nc, js, Config{Run: "rel2", Model: prm.Random(9), Reload: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer svc.Stop()
	subject := streams.Subjects("rel2").Ctrl(schemas.EventPRMPublished)
	missing := schemas.Event{Type: schemas.EventPRMPublished, Run: "rel2", PRMVersion: 7, Time: time.Unix(1700000000, 0).UTC()}
	// One at a time: the service follows from the last event stored when
	// it subscribed, so the second must not go out before it has the first.
	var reasons []string
	for i, data := range [][]byte{[]byte("garbage"), mustJSON(t, missing)} {
		if _, err := js.Publish(ctx, subject, data); err != nil {
			t.Fatal(err)
		}
		reasons = waitDeadLetters(t, js, "rel2", i+1)
	}
	if !strings.Contains(reasons[0], "not a prm.published event") || !strings.Contains(reasons[1], "does not load") {
		t.Errorf("dead-letter reasons %q", reasons)
	}
	if v := svc.Model().Version; v != 0 {
		t.Errorf("serving version %d after bad events, want the starting model's 0", v)
	}
}

// waitDeadLetters waits until run's PRM dead letters number n and
// returns their reasons.
func waitDeadLetters(t *testing.T, js jetstream.JetStream, run string, n int) []string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var reasons []string
		err := streams.Replay(testContext(t), js, streams.ReplayOptions{Run: run, Subject: "dlq.prm"}, func(m streams.Message) error {
			reasons = append(reasons, m.Headers.Get(streams.HeaderDLQReason))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(reasons) >= n {
			return reasons
		}
		if time.Now().After(deadline) {
			t.Fatalf("dead letters: %q, want %d", reasons, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
