package schemas

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// ExplorerMode selects how the explorer obtains π_B — the paper's
// dense-reward explorer or one of the controls that tell whether the PRM
// matters.
type ExplorerMode string

const (
	// ExplorerPRM trains (or tilts) π_B with the PRM named by the plan:
	// the paper's explorer.
	ExplorerPRM ExplorerMode = "prm"
	// ExplorerFrozen keeps π_B an unchanged copy of π_θ: extra sampling
	// and the buffer's selection only.
	ExplorerFrozen ExplorerMode = "frozen"
	// ExplorerRandomPRM trains (or tilts) π_B with an untrained, randomly
	// initialised PRM.
	ExplorerRandomPRM ExplorerMode = "random-prm"
)

// Valid reports whether m is a known mode.
func (m ExplorerMode) Valid() bool {
	return m == ExplorerPRM || m == ExplorerFrozen || m == ExplorerRandomPRM
}

// CyclePlan is what the learner asks of the explorer (and the swapper) for
// one RSPO cycle. It travels as the Config of the cycle.started event and
// carries every setting of the cycle's exploration, so an explorer needs
// nothing but the run's name: what the learner was told is what is done.
type CyclePlan struct {
	// Env and EnvOptions name the environment the explorer acts in (and
	// the swapper replays in, with Verify).
	Env        string            `json:"env"`
	EnvOptions map[string]string `json:"env_options,omitempty"`
	// Tasks are the cycle's tasks: the learner's updates of this cycle draw
	// their on-policy tasks from them, so swapped records share their groups.
	Tasks []TaskRef `json:"tasks"`
	// ExploreSettings are the explorer's knobs, as the learner was given
	// them (group size, collection, mode, tilt, noise, gate, verification,
	// shards).
	ExploreSettings
	// Updates is k, the explorer's dense-reward updates of π_B.
	Updates int `json:"updates"`
	// PRMVersion is the PRM version to score with (0: the explorer's own
	// choice, e.g. a random PRM in the random-prm control).
	PRMVersion int64 `json:"prm_version,omitempty"`
	// Seed makes the cycle's sampling reproducible.
	Seed int64 `json:"seed"`

	// Trainer is π_B's trainer configuration: the learner's own settings
	// (a learner.Config as JSON), whose reward source the explorer forces
	// to the dense reward. Empty means the trainer's defaults.
	Trainer json.RawMessage `json:"trainer,omitempty"`
	// Nonce, when set, is the learner's unguessable token for the cycle:
	// every explorer trajectory of the cycle carries it in its id
	// (TrajectoryID), never in a seed, so records published under the
	// cycle's ids before it started are not the cycle's
	// (CheckTrajectoryID). At most MaxNonceBytes of [0-9a-z]; empty in
	// plans written before nonces, whose ids are not checked.
	Nonce string `json:"nonce,omitempty"`
}

// Bounds of a cycle plan's values besides the explorer settings' own
// declared ranges (ExploreSettings: group and collection up to 1024, tilt
// up to 1000, PRM noise up to 100). A plan is the learner's request of
// work from every explorer, and anything that can publish a cycle.started
// event can send one, so each has a ceiling far above what a run asks (the
// suites' largest plan: 140 tasks, group 4, k = 10). Whether a plan within
// them fits an explorer is the explorer's step budgets' question
// (producers.ExplorerConfig).
const (
	// MaxPlanUpdates bounds Updates, π_B's dense-reward updates.
	MaxPlanUpdates = 1000
	// MaxPlanTrainerBytes bounds Trainer, π_B's trainer settings as JSON
	// (the learner's are a few hundred bytes).
	MaxPlanTrainerBytes = 64 << 10
	// MaxPlanEnvOptions bounds the number of EnvOptions.
	MaxPlanEnvOptions = 64
)

// Validate reports whether the plan can be carried out.
func (p CyclePlan) Validate() error {
	switch {
	case p.Env == "":
		return &ValidationError{Field: "plan.env", Reason: "empty"}
	case len(p.EnvOptions) > MaxPlanEnvOptions:
		return &ValidationError{Field: "plan.env_options", Reason: fmt.Sprintf("%d options, at most %d", len(p.EnvOptions), MaxPlanEnvOptions)}
	case len(p.Tasks) == 0 || len(p.Tasks) > MaxRolloutTasks:
		return &ValidationError{Field: "plan.tasks", Reason: fmt.Sprintf("%d tasks, want 1..%d", len(p.Tasks), MaxRolloutTasks)}
	case p.GroupSize < 1 || p.GroupSize > 1024:
		return &ValidationError{Field: "plan.group_size", Reason: fmt.Sprintf("%d not in 1..1024", p.GroupSize)}
	case p.Updates < 0 || p.Updates > MaxPlanUpdates:
		return &ValidationError{Field: "plan.updates", Reason: fmt.Sprintf("%d not in 0..%d", p.Updates, MaxPlanUpdates)}
	case p.Collect < 0 || p.Collect > 1024:
		return &ValidationError{Field: "plan.collect", Reason: fmt.Sprintf("%d not in 0..1024", p.Collect)}
	case p.Collect == 0 && !(p.SwapAll && p.Updates > 0):
		return &ValidationError{Field: "plan.collect", Reason: "0 leaves the buffer empty unless swap_all is set with updates > 0"}
	case p.PRMVersion < 0:
		return &ValidationError{Field: "plan.prm_version", Reason: "negative"}
	case p.Shards < 0 || p.Shards > len(p.Tasks):
		return &ValidationError{Field: "plan.shards", Reason: fmt.Sprintf("%d shards for %d tasks, want 1..%d (0: one)", p.Shards, len(p.Tasks), len(p.Tasks))}
	case len(p.Trainer) > MaxPlanTrainerBytes:
		return &ValidationError{Field: "plan.trainer", Reason: fmt.Sprintf("%d bytes, at most %d", len(p.Trainer), MaxPlanTrainerBytes)}
	}
	for i, t := range p.Tasks {
		if t.ID == "" {
			return &ValidationError{Field: fmt.Sprintf("plan.tasks[%d].id", i), Reason: "empty"}
		}
	}
	if err := CheckNonce("plan.nonce", p.Nonce); err != nil {
		return err
	}
	return p.ValidateExplorer()
}

// ValidateExplorer checks the explorer settings of the plan: its mode and
// how it uses its PRM (tilt, noise, AUC gate).
func (p CyclePlan) ValidateExplorer() error {
	if err := p.ExploreSettings.validate(); err != nil {
		return err
	}
	switch {
	case p.Mode != "" && !p.Mode.Valid():
		return &ValidationError{Field: "plan.mode", Reason: fmt.Sprintf("%q: want prm, frozen or random-prm", p.Mode)}
	case !(p.Tilt >= 0) || math.IsInf(p.Tilt, 0):
		return &ValidationError{Field: "plan.tilt", Reason: fmt.Sprintf("explore tilt %v: want a finite λ ≥ 0 (0: train π_B on the dense reward)", p.Tilt)}
	case !(p.PRMNoise >= 0) || math.IsInf(p.PRMNoise, 0):
		return &ValidationError{Field: "plan.prm_noise", Reason: fmt.Sprintf("%v: want a finite σ ≥ 0", p.PRMNoise)}
	case !(p.GateAUC >= 0 && p.GateAUC <= 1):
		return &ValidationError{Field: "plan.gate_auc", Reason: fmt.Sprintf("%v not in [0, 1]", p.GateAUC)}
	case p.Tilt > 0 && p.PRMNoise > 0:
		return &ValidationError{Field: "plan.prm_noise", Reason: "explore tilt and PRM noise together: noise is not applied to tilted action scores; use one"}
	case p.ShardCount() > 1 && p.PRMNoise > 0:
		// the noise of a collection is one stream drawn in trajectory
		// order: a shard cannot draw its part without the others' steps
		return &ValidationError{Field: "plan.prm_noise", Reason: fmt.Sprintf("PRM noise with %d explore shards: the noise draws depend on the whole collection; explore in one shard", p.ShardCount())}
	}
	return nil
}

// ShardCount is the number of shards of the cycle's exploration: Shards,
// 1 when unset.
func (p CyclePlan) ShardCount() int { return max(1, p.Shards) }

// ShardTasks returns the task indices [lo, hi) of shard k of the plan's
// ShardCount shards: contiguous ranges, in order, whose sizes differ by at
// most one, so shard 0 of 1 is every task and no shard of a valid plan is
// empty.
func (p CyclePlan) ShardTasks(k int) (lo, hi int) {
	n, s := len(p.Tasks), p.ShardCount()
	return k * n / s, (k + 1) * n / s
}

// ModeOrDefault is the plan's mode, ExplorerPRM when unset.
func (p CyclePlan) ModeOrDefault() ExplorerMode {
	if p.Mode == "" {
		return ExplorerPRM
	}
	return p.Mode
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

// TrajectoryID is the id of the seq-th explorer trajectory of the plan's
// rollouts tagged tag (the explorer's "c<cycle>-final", …), with the
// plan's nonce (WithNonce).
func (p CyclePlan) TrajectoryID(run, tag string, seq uint64) string {
	return WithNonce(TrajectoryID(run, SourceExplore, tag, seq), p.Nonce)
}

// CheckTrajectoryID reports whether t, an explorer trajectory of the
// plan's cycle, has an id the plan gave out: its group's tag (GroupID is
// "<tag>/<task id>") with the plan's nonce and its Seq, and a task of the
// plan. Without the nonce nobody can name such an id before the plan is
// published, so a record published under the cycle's predictable ids
// ahead of it fails here. A plan without a nonce checks nothing.
func (p CyclePlan) CheckTrajectoryID(t *Trajectory) error {
	if p.Nonce == "" {
		return nil
	}
	tag, ok := strings.CutSuffix(t.GroupID, "/"+t.TaskID)
	if !ok || tag == "" {
		return &ValidationError{Field: "group_id", Reason: fmt.Sprintf("%q is not <tag>/%s", t.GroupID, t.TaskID)}
	}
	if want := p.TrajectoryID(t.Run, tag, t.Seq); t.ID != want {
		return &ValidationError{Field: "id", Reason: fmt.Sprintf("%q does not carry the cycle's nonce: not one of the trajectories its plan asked for", t.ID)}
	}
	for _, task := range p.Tasks {
		if task.ID == t.TaskID {
			return nil
		}
	}
	return &ValidationError{Field: "task_id", Reason: fmt.Sprintf("%q is not one of the cycle's %d tasks", t.TaskID, len(p.Tasks))}
}
