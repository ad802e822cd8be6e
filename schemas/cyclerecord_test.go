package schemas

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// startedEvent is the cycle.started a learner of run "r1" publishes for
// cycle c at policy version v, with a plan of seed seed.
func startedEvent(t testing.TB, c, v, seed int64) Event {
	t.Helper()
	plan := validPlan()
	plan.Seed = seed
	raw, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	return Event{Type: EventCycleStarted, Run: "r1", Cycle: c, PolicyVersion: v, PRMVersion: 4, Update: 3 * c,
		Config: raw, Time: time.Unix(1700000000+c, 0).UTC()}
}

// The digest of an event is the same for the event a service publishes,
// the event a reader decodes from its wire form, and the event announced
// again at another time; any other field or plan changes it.
func TestEventDigestSurvivesTheWire(t *testing.T) {
	e := startedEvent(t, 2, 6, 11)
	b, err := EncodeEvent(e)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := DecodeEvent(b)
	if err != nil {
		t.Fatal(err)
	}
	again := e
	again.Time = again.Time.Add(time.Hour)
	for name, other := range map[string]Event{"decoded": decoded, "announced again later": again} {
		if EventDigest(other) != EventDigest(e) {
			t.Errorf("%s: digest %s, want %s", name, EventDigest(other), EventDigest(e))
		}
	}
	spaced := decoded
	spaced.Config = json.RawMessage(" " + string(e.Config) + "\n") // as another JSON writer might
	if EventDigest(spaced) != EventDigest(e) {
		t.Error("the digest depends on the plan's whitespace")
	}
	for name, other := range map[string]Event{"another plan": startedEvent(t, 2, 6, 12),
		"another version": startedEvent(t, 2, 7, 11), "another cycle": startedEvent(t, 3, 6, 11)} {
		if EventDigest(other) == EventDigest(e) {
			t.Errorf("%s: the same digest", name)
		}
	}
}

func recordThrough(t testing.TB, started, ended int64) CycleRecord {
	r := NewCycleRecord("r1")
	for c := int64(0); c <= started; c++ {
		r = r.WithStarted(startedEvent(t, c, 2*c, 100+c))
	}
	for c := int64(0); c <= ended; c++ {
		r = r.WithEnded(c)
	}
	return r
}

func TestCycleRecordCheck(t *testing.T) {
	r := recordThrough(t, 3, 2) // cycle 3 started, not ended
	ended := func(c int64) Event { return Event{Type: EventCycleEnded, Run: "r1", Cycle: c} }
	tests := []struct {
		name   string
		e      Event
		ahead  bool
		reason string // "" for an event the learner recorded
	}{
		{"its current cycle", startedEvent(t, 3, 6, 103), false, ""},
		{"an earlier cycle", startedEvent(t, 1, 2, 101), false, ""},
		{"the same cycle again, later", func() Event { e := startedEvent(t, 3, 6, 103); e.Time = time.Now(); return e }(), false, ""},
		{"a far cycle", startedEvent(t, 9000000000000000000, 6, 103), true, "started cycles only through 3"},
		{"the next cycle", startedEvent(t, 4, 8, 104), true, "started cycles only through 3"},
		{"its cycle with another plan", startedEvent(t, 3, 6, 999), false, "another plan"},
		{"its cycle at another version", startedEvent(t, 3, 7, 103), false, "policy version 6, not 7"},
		{"an ended cycle", ended(1), false, ""},
		{"the last ended cycle again", ended(2), false, ""},
		{"the cycle not yet ended", ended(3), true, "ended cycles only through 2"},
		{"a far cycle ended", ended(9000000000000000000), true, "ended cycles only through 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := r.Check(tc.e)
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ce *CycleEventError
			if !errors.As(err, &ce) || ce.Ahead != tc.ahead || !strings.Contains(err.Error(), tc.reason) ||
				!strings.Contains(err.Error(), "not the learner's event") {
				t.Fatalf("got %v, want a refusal (ahead %v) saying %q", err, tc.ahead, tc.reason)
			}
		})
	}
	other := startedEvent(t, 3, 6, 103)
	other.Run = "r2"
	checkField(t, "Check(another run's event)", r.Check(other), "run")
	checkField(t, "Check(policy.published)", r.Check(Event{Type: EventPolicyPublished, Run: "r1"}), "type")
	if err := NewCycleRecord("r1").Check(startedEvent(t, 0, 0, 100)); err == nil {
		t.Error("a learner that started no cycle: cycle 0 accepted")
	}
}

// The record keeps the latest MaxRecordedCycles cycles: an event of an
// older one cannot be checked and is refused, not taken for the learner's.
func TestCycleRecordKeepsTheLatestCycles(t *testing.T) {
	r := recordThrough(t, MaxRecordedCycles+9, MaxRecordedCycles+8)
	if len(r.Started) != MaxRecordedCycles || r.Oldest() != 10 || r.Latest() != MaxRecordedCycles+9 {
		t.Fatalf("record of %d cycles %d..%d, want %d cycles 10..%d", len(r.Started), r.Oldest(), r.Latest(), MaxRecordedCycles, MaxRecordedCycles+9)
	}
	var ce *CycleEventError
	if err := r.Check(startedEvent(t, 9, 18, 109)); !errors.As(err, &ce) || ce.Ahead || !strings.Contains(err.Error(), "too old") {
		t.Errorf("a cycle older than the record: %v", err)
	}
	again := r.WithStarted(startedEvent(t, 40, 80, 555)) // a learner restarted with another plan
	if err := again.Check(startedEvent(t, 40, 80, 555)); err != nil || len(again.Started) != MaxRecordedCycles {
		t.Errorf("re-recorded cycle 40: %v, %d cycles kept", err, len(again.Started))
	}
	if err := again.Check(startedEvent(t, 40, 80, 140)); err == nil {
		t.Error("the replaced plan of cycle 40 is still the learner's")
	}
	if err := r.Check(startedEvent(t, 40, 80, 140)); err != nil {
		t.Errorf("WithStarted changed the record it was called on: %v", err)
	}
}

func TestCycleRecordValidate(t *testing.T) {
	good := recordThrough(t, 2, 1)
	b, err := EncodeCycleRecord(good)
	if err != nil {
		t.Fatal(err)
	}
	if back, err := DecodeCycleRecord(b); err != nil || !reflect.DeepEqual(back, good) {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
	tests := []struct {
		name  string
		mod   func(*CycleRecord)
		field string
	}{
		{"no run", func(r *CycleRecord) { r.Run = "" }, "run"},
		{"ended below -1", func(r *CycleRecord) { r.Ended = -2 }, "ended"},
		{"cycles out of order", func(r *CycleRecord) { r.Started[0], r.Started[1] = r.Started[1], r.Started[0] }, "started[1]"},
		{"a cycle twice", func(r *CycleRecord) { r.Started[1].Cycle = 0 }, "started[1]"},
		{"a negative version", func(r *CycleRecord) { r.Started[2].PolicyVersion = -1 }, "started[2]"},
		{"a digest that is none", func(r *CycleRecord) { r.Started[0].Event = "beef" }, "started[0].event"},
		{"too many cycles", func(r *CycleRecord) {
			for c := int64(3); len(r.Started) <= MaxRecordedCycles; c++ {
				r.Started = append(r.Started, StartedCycle{Cycle: c, Event: r.Started[0].Event})
			}
		}, "started"},
	}
	for _, tc := range tests {
		r := recordThrough(t, 2, 1)
		tc.mod(&r)
		checkField(t, tc.name, r.Validate(), tc.field)
	}
}

// FuzzDecodeCycleRecord decodes arbitrary state entries: a record that is
// accepted validates, round-trips, and checks any event without failing
// otherwise than by refusing it.
func FuzzDecodeCycleRecord(f *testing.F) {
	good, _ := EncodeCycleRecord(recordThrough(f, 3, 2))
	for _, seed := range [][]byte{good, []byte(`{}`), []byte(`{"run":"r1","ended":-1,"started":[]}`),
		[]byte(`{"run":"r1","ended":5,"started":[{"cycle":9,"policy_version":1,"event":"00"}]}`), []byte(`[`)} {
		f.Add(seed, int64(3))
	}
	f.Fuzz(func(t *testing.T, b []byte, cycle int64) {
		r, err := DecodeCycleRecord(b)
		if err != nil {
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("accepted record does not validate: %v", err)
		}
		raw, err := EncodeCycleRecord(r)
		if err != nil {
			t.Fatalf("accepted record does not encode: %v", err)
		}
		if again, err := DecodeCycleRecord(raw); err != nil || !reflect.DeepEqual(normalizedRecord(again), normalizedRecord(r)) {
			t.Fatalf("round trip: got %+v, %v; want %+v", again, err, r)
		}
		for _, typ := range []EventType{EventCycleStarted, EventCycleEnded} {
			err := r.Check(Event{Type: typ, Run: r.Run, Cycle: cycle})
			var ce *CycleEventError
			if err != nil && !errors.As(err, &ce) {
				t.Fatalf("Check(%s of cycle %d): %v, want nil or a refusal", typ, cycle, err)
			}
		}
	})
}

func normalizedRecord(r CycleRecord) CycleRecord {
	if len(r.Started) == 0 {
		r.Started = nil
	}
	return r
}
