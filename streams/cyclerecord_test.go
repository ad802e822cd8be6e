package streams_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

func cycleEvent(typ schemas.EventType, cycle int64, seed int) schemas.Event {
	raw, _ := json.Marshal(map[string]int{"seed": seed})
	e := schemas.Event{Type: typ, Run: "r1", Cycle: cycle, PolicyVersion: 3 * cycle, Time: time.Now().UTC()}
	if typ == schemas.EventCycleStarted {
		e.Config = raw
	}
	return e
}

// A learner's cycle events pass the gate of a stage that read the record
// before they were announced; a cycle.started or cycle.ended it did not
// announce is refused, whatever its cycle, and a gate tells a record it
// cannot read from a refusal.
func TestCycleGateFollowsTheLearnersRecord(t *testing.T) {
	_, js := streamstest.Connect(t, streamstest.RunServer(t))
	ctx := context.Background()
	gate := streams.NewCycleGate(js, "r1")
	if err := gate.Check(ctx, cycleEvent(schemas.EventCycleStarted, 0, 1)); !refused(err, true) {
		t.Fatalf("cycle 0 before the learner announced it: %v, want refused as ahead", err)
	}
	for c := range int64(3) {
		for _, typ := range []schemas.EventType{schemas.EventCycleStarted, schemas.EventCycleEnded} {
			e := cycleEvent(typ, c, int(c))
			if _, err := streams.AnnounceCycle(ctx, js, e); err != nil {
				t.Fatal(err)
			}
			if err := gate.Check(ctx, e); err != nil { // the gate's copy is a cycle behind
				t.Fatalf("the learner's %s of cycle %d: %v", typ, c, err)
			}
		}
	}
	if _, err := streams.AnnounceCycle(ctx, js, cycleEvent(schemas.EventCycleStarted, 3, 3)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		e     schemas.Event
		ahead bool
	}{
		{"a far cycle.started", cycleEvent(schemas.EventCycleStarted, 1<<62, 3), true},
		{"the next cycle.started", cycleEvent(schemas.EventCycleStarted, 4, 4), true},
		{"the current cycle's, with another plan", cycleEvent(schemas.EventCycleStarted, 3, 99), false},
		{"a far cycle.ended", cycleEvent(schemas.EventCycleEnded, 1<<62, 0), true},
		{"the current cycle's cycle.ended", cycleEvent(schemas.EventCycleEnded, 3, 0), true},
	} {
		if err := gate.Check(ctx, tc.e); !refused(err, tc.ahead) {
			t.Errorf("%s: %v, want refused (ahead %v)", tc.name, err, tc.ahead)
		}
	}
	r, err := streams.LoadCycleRecord(ctx, js, "r1")
	if err != nil || r.Latest() != 3 || r.Ended != 2 {
		t.Fatalf("record %+v, %v: want cycles started through 3, ended through 2", r, err)
	}
	kv, err := streams.State(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, streams.CycleRecordKey("r1"), []byte(`{"run":"r1","ended":-7}`)); err != nil {
		t.Fatal(err)
	}
	err = streams.NewCycleGate(js, "r1").Check(ctx, cycleEvent(schemas.EventCycleEnded, 0, 0))
	if err == nil || refused(err, false) || refused(err, true) || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("a corrupt record: %v, want an error reading it, not a verdict", err)
	}
}

func refused(err error, ahead bool) bool {
	var ce *schemas.CycleEventError
	return errors.As(err, &ce) && ce.Ahead == ahead
}

// A cycle.started forged under the message id the learner's next one
// would have, published ahead of it, used to have the learner's dropped
// as a duplicate: no stage found the event the record held, and the
// cycle's shards were dead-lettered. The learner's event is published
// again under an id of its own, once, however often it is announced.
func TestAnnounceCycleOutlivesASquattedMessageID(t *testing.T) {
	_, js := streamstest.Connect(t, streamstest.RunServer(t))
	ctx := context.Background()
	genuine := cycleEvent(schemas.EventCycleStarted, 0, 1)
	squat := cycleEvent(schemas.EventCycleStarted, 0, 666) // another plan, the same id
	if streams.EventID(squat) != streams.EventID(genuine) {
		t.Fatal("the forgery does not take the learner's id")
	}
	if _, err := streams.PublishEvent(ctx, js, squat); err != nil {
		t.Fatal(err)
	}
	for range 2 { // announced again after a restart
		if _, err := streams.AnnounceCycle(ctx, js, genuine); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := streams.LoadCycleRecord(ctx, js, "r1")
	if err != nil {
		t.Fatal(err)
	}
	var events, learners int
	err = streams.Replay(ctx, js, streams.ReplayOptions{Run: "r1", Subject: streams.CtrlKind(schemas.EventCycleStarted)},
		func(m streams.Message) error {
			events++
			if m.Event != nil && rec.Check(*m.Event) == nil {
				learners++
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if events != 2 || learners != 1 {
		t.Errorf("%d cycle.started events on the bus, %d of them the learner's; want the forgery and the learner's once", events, learners)
	}
}
