package schemas

import (
	"encoding/json"
	"fmt"
	"time"
)

// EventType names a control event. The subject of an event is
// rspo.<run>.ctrl.<type>.
type EventType string

// The control events of the RSPO loop (docs/architecture.md).
const (
	EventRunStarted      EventType = "run.started"
	EventCycleStarted    EventType = "cycle.started"
	EventCycleExplored   EventType = "cycle.explored"
	EventCycleEnded      EventType = "cycle.ended"
	EventPolicyPublished EventType = "policy.published"
	EventPRMPublished    EventType = "prm.published"
	EventRunFinished     EventType = "run.finished"
)

// EventTypes lists every control event type in protocol order.
var EventTypes = []EventType{
	EventRunStarted, EventCycleStarted, EventCycleExplored, EventCycleEnded,
	EventPolicyPublished, EventPRMPublished, EventRunFinished,
}

// Valid reports whether t is a known event type.
func (t EventType) Valid() bool {
	for _, k := range EventTypes {
		if t == k {
			return true
		}
	}
	return false
}

// Event is a control event. One struct serves every type; fields that do not
// apply to a type stay zero and are omitted from the JSON.
type Event struct {
	Type EventType `json:"type"`
	Run  string    `json:"run"`
	Time time.Time `json:"time"`
	// Cycle is the RSPO cycle (cycle.*, policy.published).
	Cycle int64 `json:"cycle,omitempty"`
	// PolicyVersion is the π_θ version the event refers to: the one the
	// explorer must copy (cycle.started) or the one just stored
	// (policy.published).
	PolicyVersion int64 `json:"policy_version,omitempty"`
	// PRMVersion is the PRM version just stored (prm.published).
	PRMVersion int64 `json:"prm_version,omitempty"`
	// Object is the object-store key of the published snapshot.
	Object string `json:"object,omitempty"`
	// Model is the name under which inference servers serve the published
	// version (policy.published): a weights path or LoRA adapter name that
	// actors put in their requests' model field. Empty means the actors'
	// configured model name.
	Model string `json:"model,omitempty"`
	// Trajectories counts the trajectories the event covers (cycle.explored:
	// how many the explorer published for the cycle).
	Trajectories int64 `json:"trajectories,omitempty"`
	// Shard and Shards place a cycle.explored in the cycle's exploration:
	// shard Shard of the Shards the plan split it into (ExploreShard), and
	// Trajectories counts that shard's. Shards 0, in events written before
	// sharding, is the whole cycle.
	Shard  int64 `json:"shard,omitempty"`
	Shards int64 `json:"shards,omitempty"`
	// Update is the learner's update counter at the time of the event.
	Update int64 `json:"update,omitempty"`
	// Config carries the run configuration (run.started) or other
	// type-specific details as raw JSON.
	Config json.RawMessage `json:"config,omitempty"`
	// Metrics carries summary figures (cycle.ended, run.finished, prm.published).
	Metrics map[string]float64 `json:"metrics,omitempty"`
}

// EncodeEvent returns the JSON wire form of e after validating it.
func EncodeEvent(e Event) ([]byte, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(e)
}

// DecodeEvent parses and validates a control event.
func DecodeEvent(b []byte) (Event, error) {
	var e Event
	if err := json.Unmarshal(b, &e); err != nil {
		return Event{}, &ValidationError{Field: "event", Reason: fmt.Sprintf("not valid JSON: %v", err)}
	}
	if err := e.Validate(); err != nil {
		return Event{}, err
	}
	return e, nil
}

// Validate reports whether the event is well formed.
func (e Event) Validate() error {
	if !e.Type.Valid() {
		return &ValidationError{Field: "type", Reason: fmt.Sprintf("unknown event type %q", e.Type)}
	}
	if err := CheckRunName(e.Run); err != nil {
		return err
	}
	if e.Cycle < 0 || e.PolicyVersion < 0 || e.PRMVersion < 0 {
		return &ValidationError{Field: "cycle/version", Reason: "negative"}
	}
	if e.Trajectories < 0 || e.Update < 0 {
		return &ValidationError{Field: "trajectories/update", Reason: "negative"}
	}
	if e.Shards < 0 || e.Shards > MaxRolloutTasks || e.Shard < 0 || e.Shard >= max(1, e.Shards) {
		return &ValidationError{Field: "shard/shards", Reason: fmt.Sprintf("shard %d of %d: want 0 ≤ shard < shards ≤ %d (shards 0: the whole cycle)", e.Shard, e.Shards, MaxRolloutTasks)}
	}
	if e.Shards > 0 && e.Type != EventCycleExplored {
		return &ValidationError{Field: "shards", Reason: fmt.Sprintf("only %s events name a shard, not %s", EventCycleExplored, e.Type)}
	}
	if len(e.Model) > MaxModelName {
		return &ValidationError{Field: "model", Reason: fmt.Sprintf("%d bytes, at most %d", len(e.Model), MaxModelName)}
	}
	return checkFiniteValues("metrics", e.Metrics)
}

// MaxModelName bounds Event.Model.
const MaxModelName = 512

// RolloutRequest asks an actor to run N episodes of each task with a given
// policy version. It travels as JSON on rspo.<run>.work.rollout.
type RolloutRequest struct {
	// ID is deterministic (learner, update, index) so a retried request is
	// deduplicated.
	ID  string `json:"id"`
	Run string `json:"run"`
	// Cycle and Update place the request in the learner's loop.
	Cycle  int64 `json:"cycle"`
	Update int64 `json:"update"`
	// PolicyVersion is the π_θ version to act with.
	PolicyVersion int64 `json:"policy_version"`
	// Source is the stream the trajectories go to (normally onpolicy).
	Source Source `json:"source"`
	// Env is the environment name and EnvOptions its options (preset, ...).
	Env        string            `json:"env"`
	EnvOptions map[string]string `json:"env_options,omitempty"`
	// Tasks to roll out; each gets GroupSize episodes sharing a group id.
	Tasks     []TaskRef `json:"tasks"`
	GroupSize int       `json:"group_size"`
	// Seed makes the sampling deterministic.
	Seed int64 `json:"seed"`
	// Temperature of the policy's softmax (0 means the policy's default).
	Temperature float64 `json:"temperature,omitempty"`
	// Nonce, when set, is the requester's unguessable token for this
	// request: it is mixed into the trajectory ids (rollout.RequestTrajectoryID)
	// and the work item's message id, never into the episodes' seeds, so
	// nobody who has not seen the request can publish under its ids
	// first, and a request asked again under a fresh nonce is played to
	// the same episodes under new ids. At most MaxNonceBytes of [0-9a-z].
	Nonce string `json:"nonce,omitempty"`
}

// TaskRef identifies a task in a request: enough to regenerate it.
type TaskRef struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Split       string `json:"split"`
	Seed        int64  `json:"seed"`
	Instruction string `json:"instruction"`
}

// MaxRolloutTasks bounds a request's size.
const MaxRolloutTasks = 4096

// Validate reports whether the request is well formed.
func (r RolloutRequest) Validate() error {
	if err := CheckRunName(r.Run); err != nil {
		return err
	}
	switch {
	case r.ID == "":
		return &ValidationError{Field: "id", Reason: "empty"}
	case r.Env == "":
		return &ValidationError{Field: "env", Reason: "empty"}
	case !r.Source.Valid():
		return &ValidationError{Field: "source", Reason: fmt.Sprintf("unknown source %q", r.Source)}
	case len(r.Tasks) == 0:
		return &ValidationError{Field: "tasks", Reason: "no tasks"}
	case len(r.Tasks) > MaxRolloutTasks:
		return &ValidationError{Field: "tasks", Reason: fmt.Sprintf("%d tasks, at most %d", len(r.Tasks), MaxRolloutTasks)}
	case r.GroupSize < 1 || r.GroupSize > 1024:
		return &ValidationError{Field: "group_size", Reason: fmt.Sprintf("%d not in 1..1024", r.GroupSize)}
	case r.PolicyVersion < 0:
		return &ValidationError{Field: "policy_version", Reason: "negative"}
	case r.Cycle < 0 || r.Update < 0:
		return &ValidationError{Field: "cycle/update", Reason: "negative"}
	case !isFinite(r.Temperature) || r.Temperature < 0:
		return &ValidationError{Field: "temperature", Reason: fmt.Sprintf("%v is not a finite value ≥ 0", r.Temperature)}
	}
	if err := CheckNonce("nonce", r.Nonce); err != nil {
		return err
	}
	for i, task := range r.Tasks {
		if task.ID == "" {
			return &ValidationError{Field: fmt.Sprintf("tasks[%d].id", i), Reason: "empty"}
		}
	}
	return nil
}

// EncodeRolloutRequest returns the JSON wire form after validating.
func EncodeRolloutRequest(r RolloutRequest) ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(r)
}

// DecodeRolloutRequest parses and validates a rollout request.
func DecodeRolloutRequest(b []byte) (RolloutRequest, error) {
	var r RolloutRequest
	if err := json.Unmarshal(b, &r); err != nil {
		return RolloutRequest{}, &ValidationError{Field: "request", Reason: fmt.Sprintf("not valid JSON: %v", err)}
	}
	if err := r.Validate(); err != nil {
		return RolloutRequest{}, err
	}
	return r, nil
}

// DefaultModelName is the model name under which a run's built-in policy
// version v is announced and served (`rspo serve policy`): "<run>-v<v>".
func DefaultModelName(run string, v int64) string { return fmt.Sprintf("%s-v%d", run, v) }
