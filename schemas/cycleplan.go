package schemas

import (
	"encoding/json"
	"fmt"
)

// CyclePlan is what the learner asks of the explorer for one RSPO cycle. It
// travels as the Config of the cycle.started event.
type CyclePlan struct {
	// Env and EnvOptions name the environment the explorer acts in.
	Env        string            `json:"env"`
	EnvOptions map[string]string `json:"env_options,omitempty"`
	// Tasks are the cycle's tasks: the learner's updates of this cycle draw
	// their on-policy tasks from them, so swapped records share their groups.
	Tasks []TaskRef `json:"tasks"`
	// GroupSize is the number of rollouts per task in each explorer update.
	GroupSize int `json:"group_size"`
	// Updates is k, the explorer's dense-reward updates of π_B.
	Updates int `json:"updates"`
	// Collect is the number of rollouts per task of the final π_B that are
	// published for the swap (0 is allowed when SwapAll publishes the
	// training rollouts instead).
	Collect int `json:"collect"`
	// SwapAll publishes the explorer's training rollouts too, each with its
	// own behaviour log-probs, not only the final collection.
	SwapAll bool `json:"swap_all,omitempty"`
	// PRMVersion is the PRM version to score with (0: the explorer's own
	// choice, e.g. a random PRM in the random-prm control).
	PRMVersion int64 `json:"prm_version,omitempty"`
	// Seed makes the cycle's sampling reproducible.
	Seed int64 `json:"seed"`
}

// Validate reports whether the plan can be carried out.
func (p CyclePlan) Validate() error {
	switch {
	case p.Env == "":
		return &ValidationError{Field: "plan.env", Reason: "empty"}
	case len(p.Tasks) == 0 || len(p.Tasks) > MaxRolloutTasks:
		return &ValidationError{Field: "plan.tasks", Reason: fmt.Sprintf("%d tasks, want 1..%d", len(p.Tasks), MaxRolloutTasks)}
	case p.GroupSize < 1 || p.GroupSize > 1024:
		return &ValidationError{Field: "plan.group_size", Reason: fmt.Sprintf("%d not in 1..1024", p.GroupSize)}
	case p.Updates < 0 || p.Updates > 1000:
		return &ValidationError{Field: "plan.updates", Reason: fmt.Sprintf("%d not in 0..1000", p.Updates)}
	case p.Collect < 0 || p.Collect > 1024:
		return &ValidationError{Field: "plan.collect", Reason: fmt.Sprintf("%d not in 0..1024", p.Collect)}
	case p.Collect == 0 && !(p.SwapAll && p.Updates > 0):
		return &ValidationError{Field: "plan.collect", Reason: "0 leaves the buffer empty unless swap_all is set with updates > 0"}
	case p.PRMVersion < 0:
		return &ValidationError{Field: "plan.prm_version", Reason: "negative"}
	}
	return nil
}

// CyclePlanOf decodes and validates the plan carried by a cycle.started event.
func CyclePlanOf(e Event) (CyclePlan, error) {
	if e.Type != EventCycleStarted {
		return CyclePlan{}, &ValidationError{Field: "type", Reason: fmt.Sprintf("%s carries no cycle plan", e.Type)}
	}
	var p CyclePlan
	if err := json.Unmarshal(e.Config, &p); err != nil {
		return CyclePlan{}, &ValidationError{Field: "config", Reason: fmt.Sprintf("not a cycle plan: %v", err)}
	}
	return p, p.Validate()
}
