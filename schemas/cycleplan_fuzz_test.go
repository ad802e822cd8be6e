package schemas

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzCyclePlanOf decodes arbitrary cycle.started configs: a plan that is
// accepted validates, and survives an encode/decode round trip unchanged.
func FuzzCyclePlanOf(f *testing.F) {
	good, _ := json.Marshal(validPlan())
	for _, seed := range [][]byte{good, []byte(`{}`), []byte(`{"env":"household","tasks":[{"id":"t"}],"group_size":1,"collect":1,"tilt":-1}`),
		[]byte(`{"env":"x","tasks":[{"id":"t"}],"group_size":1,"collect":1,"trainer":{"LR":1e309}}`), []byte(`[`),
		[]byte(`{"env":"household","tasks":[{"id":"t"}],"group_size":1,"collect":1,"mode":"frozen","tilt":1e308}`)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, config []byte) {
		plan, err := CyclePlanOf(Event{Type: EventCycleStarted, Run: "r", Config: config})
		if err != nil {
			return
		}
		if err := plan.Validate(); err != nil {
			t.Fatalf("accepted plan does not validate: %v", err)
		}
		raw, err := json.Marshal(plan)
		if err != nil {
			t.Fatalf("accepted plan does not encode: %v", err)
		}
		again, err := CyclePlanOf(Event{Type: EventCycleStarted, Run: "r", Config: raw})
		if err != nil {
			t.Fatalf("round trip refused: %v", err)
		}
		plan.Trainer, again.Trainer = compactJSON(plan.Trainer), compactJSON(again.Trainer)
		if !reflect.DeepEqual(normalizedPlan(plan), normalizedPlan(again)) {
			t.Fatalf("round trip changed the plan:\n%+v\n%+v", plan, again)
		}
	})
}

// normalizedPlan maps empty collections to nil: JSON drops the difference.
func normalizedPlan(p CyclePlan) CyclePlan {
	if len(p.EnvOptions) == 0 {
		p.EnvOptions = nil
	}
	if len(p.Tasks) == 0 {
		p.Tasks = nil
	}
	return p
}

func compactJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	b, _ := json.Marshal(v)
	return b
}
