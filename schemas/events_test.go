package schemas

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func validEvent() Event {
	return Event{
		Type: EventPolicyPublished, Run: "r1", Time: time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC),
		Cycle: 2, PolicyVersion: 7, Object: "policy/7", Update: 40,
		Config:  json.RawMessage(`{"alpha":0.125}`),
		Metrics: map[string]float64{"success_rate": 0.5},
	}
}

func TestEventRoundTrip(t *testing.T) {
	for _, typ := range EventTypes {
		t.Run(string(typ), func(t *testing.T) {
			want := validEvent()
			want.Type = typ
			b, err := EncodeEvent(want)
			if err != nil {
				t.Fatalf("EncodeEvent: %v", err)
			}
			got, err := DecodeEvent(b)
			if err != nil {
				t.Fatalf("DecodeEvent: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}

func TestEventOmitsZeroFields(t *testing.T) {
	b, err := EncodeEvent(Event{Type: EventRunStarted, Run: "r1", Time: time.Unix(0, 0).UTC()})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"type":"run.started","run":"r1","time":"1970-01-01T00:00:00Z"}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

func TestEventValidate(t *testing.T) {
	tests := []struct {
		name      string
		modify    func(*Event)
		wantField string
	}{
		{"unknown type", func(e *Event) { e.Type = "cycle.paused" }, "type"},
		{"empty run", func(e *Event) { e.Run = "" }, "run"},
		{"run with dot", func(e *Event) { e.Run = "a.b" }, "run"},
		{"negative cycle", func(e *Event) { e.Cycle = -1 }, "cycle/version"},
		{"negative prm version", func(e *Event) { e.PRMVersion = -1 }, "cycle/version"},
		{"negative trajectories", func(e *Event) { e.Trajectories = -1 }, "trajectories/update"},
		{"NaN metric", func(e *Event) { e.Metrics["loss"] = math.NaN() }, `metrics["loss"]`},
		{"shard past the shards", func(e *Event) { e.Type, e.Shard, e.Shards = EventCycleExplored, 3, 3 }, "shard/shards"},
		{"shard of no shard count", func(e *Event) { e.Type, e.Shard = EventCycleExplored, 1 }, "shard/shards"},
		{"negative shards", func(e *Event) { e.Type, e.Shards = EventCycleExplored, -1 }, "shard/shards"},
		{"shards on another event", func(e *Event) { e.Shards = 2 }, "shards"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := validEvent()
			tc.modify(&e)
			checkField(t, "Validate", e.Validate(), tc.wantField)
			if _, err := EncodeEvent(e); !errors.Is(err, ErrInvalid) {
				t.Errorf("EncodeEvent: got %v, want ErrInvalid", err)
			}
		})
	}
}

func TestShardedCycleExploredRoundTrip(t *testing.T) {
	want := Event{Type: EventCycleExplored, Run: "r1", Time: time.Unix(5, 0).UTC(), Cycle: 3, PolicyVersion: 9,
		Shard: 2, Shards: 3, Trajectories: 12, Metrics: map[string]float64{"env_steps": 340}}
	b, err := EncodeEvent(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeEvent(b)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, %v; want %+v", got, err, want)
	}
}

func TestDecodeEventRejects(t *testing.T) {
	tests := []struct {
		name, in, wantField string
	}{
		{"not JSON", `{"type":`, "event"},
		{"wrong JSON type", `[]`, "event"},
		{"unknown type", `{"type":"nope","run":"r1"}`, "type"},
		{"no run", `{"type":"run.started"}`, "run"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeEvent([]byte(tc.in))
			checkField(t, "DecodeEvent", err, tc.wantField)
		})
	}
}

func validRequest() RolloutRequest {
	return RolloutRequest{
		ID: "r1.learner.3.0", Run: "r1", Cycle: 1, Update: 3, PolicyVersion: 3, Source: SourceOnPolicy,
		Env: "household", EnvOptions: map[string]string{"preset": "hard"},
		Tasks: []TaskRef{
			{ID: "household/train/1", Type: "pick", Split: "train", Seed: 1, Instruction: "put a mug in the sink"},
			{ID: "household/train/2", Type: "heat", Split: "train", Seed: 2, Instruction: "heat an egg"},
		},
		GroupSize: 8, Seed: 99, Temperature: 1,
	}
}

func TestRolloutRequestRoundTrip(t *testing.T) {
	want := validRequest()
	b, err := EncodeRolloutRequest(want)
	if err != nil {
		t.Fatalf("EncodeRolloutRequest: %v", err)
	}
	got, err := DecodeRolloutRequest(b)
	if err != nil {
		t.Fatalf("DecodeRolloutRequest: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestRolloutRequestValidate(t *testing.T) {
	tests := []struct {
		name      string
		modify    func(*RolloutRequest)
		wantField string
	}{
		{"empty id", func(r *RolloutRequest) { r.ID = "" }, "id"},
		{"empty run", func(r *RolloutRequest) { r.Run = "" }, "run"},
		{"run with space", func(r *RolloutRequest) { r.Run = "a b" }, "run"},
		{"empty env", func(r *RolloutRequest) { r.Env = "" }, "env"},
		{"unknown source", func(r *RolloutRequest) { r.Source = "x" }, "source"},
		{"no tasks", func(r *RolloutRequest) { r.Tasks = nil }, "tasks"},
		{"too many tasks", func(r *RolloutRequest) { r.Tasks = make([]TaskRef, MaxRolloutTasks+1) }, "tasks"},
		{"group size 0", func(r *RolloutRequest) { r.GroupSize = 0 }, "group_size"},
		{"group size 1025", func(r *RolloutRequest) { r.GroupSize = 1025 }, "group_size"},
		{"negative policy version", func(r *RolloutRequest) { r.PolicyVersion = -1 }, "policy_version"},
		{"negative update", func(r *RolloutRequest) { r.Update = -1 }, "cycle/update"},
		{"negative temperature", func(r *RolloutRequest) { r.Temperature = -0.5 }, "temperature"},
		{"infinite temperature", func(r *RolloutRequest) { r.Temperature = math.Inf(1) }, "temperature"},
		{"task without id", func(r *RolloutRequest) { r.Tasks[1].ID = "" }, "tasks[1].id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := validRequest()
			tc.modify(&r)
			checkField(t, "Validate", r.Validate(), tc.wantField)
			if _, err := EncodeRolloutRequest(r); !errors.Is(err, ErrInvalid) {
				t.Errorf("EncodeRolloutRequest: got %v, want ErrInvalid", err)
			}
		})
	}
	_, err := DecodeRolloutRequest([]byte(`{"id":1}`))
	checkField(t, "DecodeRolloutRequest", err, "request")
}

func validMetrics() MetricsEvent {
	return MetricsEvent{
		Run: "r1", Component: "learner", Time: time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC),
		Kind: "update", Cycle: 1, Update: 12,
		Values: map[string]float64{"success_rate": 0.25, "clip_frac_on": 0.01},
		Labels: map[string]string{"split": "train"},
		ID:     "update/u12",
	}
}

func TestMetricsRoundTrip(t *testing.T) {
	want := validMetrics()
	b, err := EncodeMetrics(want)
	if err != nil {
		t.Fatalf("EncodeMetrics: %v", err)
	}
	got, err := DecodeMetrics(b)
	if err != nil {
		t.Fatalf("DecodeMetrics: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestMetricsValidate(t *testing.T) {
	tests := []struct {
		name      string
		modify    func(*MetricsEvent)
		wantField string
	}{
		{"empty run", func(m *MetricsEvent) { m.Run = "" }, "run"},
		{"run with wildcard", func(m *MetricsEvent) { m.Run = ">" }, "run"},
		{"empty component", func(m *MetricsEvent) { m.Component = "" }, "component"},
		{"empty kind", func(m *MetricsEvent) { m.Kind = "" }, "kind"},
		{"NaN value", func(m *MetricsEvent) { m.Values["loss"] = math.NaN() }, `values["loss"]`},
		{"id with a line break", func(m *MetricsEvent) { m.ID = "update/u1\r\nX: y" }, "id"},
		{"id too long", func(m *MetricsEvent) { m.ID = strings.Repeat("u", MaxMetricsIDBytes+1) }, "id"},
		{"first bad key in order", func(m *MetricsEvent) {
			m.Values["b"], m.Values["a"] = math.Inf(1), math.Inf(-1)
		}, `values["a"]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := validMetrics()
			tc.modify(&m)
			checkField(t, "Validate", m.Validate(), tc.wantField)
			if _, err := EncodeMetrics(m); !errors.Is(err, ErrInvalid) {
				t.Errorf("EncodeMetrics: got %v, want ErrInvalid", err)
			}
		})
	}
	_, err := DecodeMetrics([]byte(`{"run":`))
	checkField(t, "DecodeMetrics", err, "metrics")
}
