package schemas

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

func validPlan() CyclePlan {
	return CyclePlan{Env: "household", EnvOptions: map[string]string{"preset": "hard"}, Tasks: []TaskRef{{ID: "household/train/1", Type: "pick", Split: "train", Seed: 1}}, Updates: 3, PRMVersion: 4, Seed: 11, Trainer: json.RawMessage(`{"lr":0.02}`), ExploreSettings: ExploreSettings{GroupSize: 8, Collect: 2, Mode: ExplorerRandomPRM, Tilt: 10, GateAUC: 0.7, Verify: true},
		Nonce: "0123456789abcdef01234567"}
}

func TestCyclePlanOf(t *testing.T) {
	want := validPlan()
	config, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := CyclePlanOf(Event{Type: EventCycleStarted, Run: "r1", Config: config})
	if err != nil {
		t.Fatalf("CyclePlanOf: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	_, err = CyclePlanOf(Event{Type: EventCycleEnded, Run: "r1", Config: config})
	checkField(t, "CyclePlanOf(cycle.ended)", err, "type")
	_, err = CyclePlanOf(Event{Type: EventCycleStarted, Run: "r1", Config: json.RawMessage(`[1]`)})
	checkField(t, "CyclePlanOf(bad config)", err, "config")
}

func TestCyclePlanValidate(t *testing.T) {
	tests := []struct {
		name      string
		modify    func(*CyclePlan)
		wantField string
	}{
		{"no env", func(p *CyclePlan) { p.Env = "" }, "plan.env"},
		{"no tasks", func(p *CyclePlan) { p.Tasks = nil }, "plan.tasks"},
		{"group size 0", func(p *CyclePlan) { p.GroupSize = 0 }, "plan.group_size"},
		{"negative updates", func(p *CyclePlan) { p.Updates = -1 }, "plan.updates"},
		{"too many collected", func(p *CyclePlan) { p.Collect = 1025 }, "plan.collect"},
		{"nothing to swap", func(p *CyclePlan) { p.Collect = 0 }, "plan.collect"},
		{"negative prm version", func(p *CyclePlan) { p.PRMVersion = -1 }, "plan.prm_version"},
		{"unknown mode", func(p *CyclePlan) { p.Mode = "psychic" }, "plan.mode"},
		{"negative tilt", func(p *CyclePlan) { p.Tilt = -1 }, "plan.tilt"},
		{"NaN tilt", func(p *CyclePlan) { p.Tilt = math.NaN() }, "plan.tilt"},
		{"infinite tilt", func(p *CyclePlan) { p.Tilt = math.Inf(1) }, "plan.tilt"},
		// A cycle.started with tilt 1e308 used to be carried out.
		{"huge tilt", func(p *CyclePlan) { p.Tilt = 1e308 }, "plan.tilt"},
		{"huge noise", func(p *CyclePlan) { p.PRMNoise = 1e9 }, "plan.prm_noise"},
		{"negative noise", func(p *CyclePlan) { p.PRMNoise = -0.1 }, "plan.prm_noise"},
		{"group above the maximum", func(p *CyclePlan) { p.GroupSize = 1025 }, "plan.group_size"},
		{"updates above the maximum", func(p *CyclePlan) { p.Updates = MaxPlanUpdates + 1 }, "plan.updates"},
		{"a task without an id", func(p *CyclePlan) { p.Tasks[0].ID = "" }, "plan.tasks[0].id"},
		{"trainer settings too large", func(p *CyclePlan) {
			p.Trainer = json.RawMessage(`"` + strings.Repeat("x", MaxPlanTrainerBytes) + `"`)
		}, "plan.trainer"},
		{"too many env options", func(p *CyclePlan) {
			for i := range MaxPlanEnvOptions + 1 {
				p.EnvOptions[fmt.Sprint("k", i)] = "v"
			}
		}, "plan.env_options"},
		{"gate above 1", func(p *CyclePlan) { p.GateAUC = 1.5 }, "plan.gate_auc"},
		{"tilt with noise", func(p *CyclePlan) { p.Tilt, p.PRMNoise = 2, 0.1 }, "plan.prm_noise"},
		{"negative shards", func(p *CyclePlan) { p.Shards = -1 }, "plan.shards"},
		{"nonce with a dot", func(p *CyclePlan) { p.Nonce = "ab.cd" }, "plan.nonce"},
		{"nonce too long", func(p *CyclePlan) { p.Nonce = strings.Repeat("a", MaxNonceBytes+1) }, "plan.nonce"},
		{"more shards than tasks", func(p *CyclePlan) { p.Shards = 2 }, "plan.shards"},
		{"shards with noise", func(p *CyclePlan) {
			p.Tasks = append(p.Tasks, TaskRef{ID: "household/train/2"})
			p.Tilt, p.Shards, p.PRMNoise = 0, 2, 0.1
		}, "plan.prm_noise"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := validPlan()
			tc.modify(&p)
			checkField(t, "Validate", p.Validate(), tc.wantField)
		})
	}
	swapAll := validPlan()
	swapAll.Collect, swapAll.SwapAll = 0, true
	if err := swapAll.Validate(); err != nil {
		t.Errorf("swap_all with no collection: got %v, want nil", err)
	}
	strongest := validPlan()
	strongest.Tilt, strongest.GroupSize, strongest.Updates = 1000, 1024, MaxPlanUpdates
	if err := strongest.Validate(); err != nil {
		t.Errorf("a plan at the maxima: got %v, want nil", err)
	}
}
