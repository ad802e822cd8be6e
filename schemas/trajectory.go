package schemas

import (
	"time"
)

// SchemaVersion is the version of the trajectory record layout written by
// this code. Decoders reject any other version with ErrSchemaVersion.
const SchemaVersion = 1

// Source says which kind of producer made a trajectory.
type Source string

const (
	// SourceOnPolicy marks rollouts of the target policy π_θ made by actors.
	SourceOnPolicy Source = "onpolicy"
	// SourceExplore marks rollouts of the dense-reward explorer π_B.
	SourceExplore Source = "explore"
)

// Valid reports whether s is a known source.
func (s Source) Valid() bool { return s == SourceOnPolicy || s == SourceExplore }

// Trajectory is one episode of one task, as produced by an actor or an
// explorer, and — after the swapper has relabelled it — as stored in the
// replay buffer. On the wire it is one Arrow record batch: a row per step,
// the trajectory fields repeated as columns.
type Trajectory struct {
	// ID is deterministic (see TrajectoryID) so that a retried publish is
	// recognised by JetStream's dedupe as the same message.
	ID string `json:"id"`
	// Run names the training run; every subject is scoped by it.
	Run string `json:"run"`
	// Cycle is the RSPO cycle the trajectory belongs to (0 before the first).
	Cycle int64 `json:"cycle"`
	// Source is onpolicy or explore.
	Source Source `json:"source"`
	// PolicyVersion is the version of the policy that acted.
	PolicyVersion int64 `json:"policy_version"`
	// Producer names the actor or explorer instance that made it.
	Producer string `json:"producer"`
	// Seq is the producer's sequence number for this trajectory.
	Seq uint64 `json:"seq,string"`

	// Env names the environment ("household", "shop").
	Env string `json:"env"`
	// TaskID identifies the task within the environment and split.
	TaskID string `json:"task_id"`
	// TaskType is the task's family (e.g. "pick_heat_then_place").
	TaskType string `json:"task_type"`
	// TaskSeed regenerates the task's world; with the actions it replays the episode.
	TaskSeed int64 `json:"task_seed,string"`
	// Split is the task split ("train", "eval_in_distribution", ...).
	Split string `json:"split"`
	// Instruction is the goal text the agent was given.
	Instruction string `json:"instruction"`
	// GroupID groups the N rollouts of one task for GRPO normalisation.
	GroupID string `json:"group_id"`

	// OutcomeReward is the environment's reward at the end of the episode (0..1).
	OutcomeReward float64 `json:"outcome_reward"`
	// Success is true when the task was completed.
	Success bool `json:"success"`
	// CreatedAt is when the episode finished.
	CreatedAt time.Time `json:"created_at"`

	// Swapped is set by the swapper: the per-step Reward labels are the
	// outcome reward, and the dense labels survive only as DenseReward.
	Swapped bool `json:"swapped"`
	// DistinctStates and RepeatedVisits are the buffer's priority keys
	// (computed from the steps' state keys by the swapper).
	DistinctStates int32 `json:"distinct_states"`
	RepeatedVisits int32 `json:"repeated_visits"`

	Steps []Step `json:"steps"`
}

// Step is one turn of a trajectory: what the agent saw, what it could do,
// what it did, and with what probability.
type Step struct {
	// Observation is the text the agent saw before acting.
	Observation string `json:"observation"`
	// Admissible lists the actions the agent could choose from. It may be
	// empty for producers (e.g. LLM policies) that do not choose from a list;
	// NumAdmissible then still records the count if known.
	Admissible []string `json:"admissible,omitempty"`
	// NumAdmissible is the number of admissible actions at this step.
	NumAdmissible int32 `json:"num_admissible"`
	// Action is the action text taken.
	Action string `json:"action"`
	// ActionIndex is Action's index in Admissible, or -1 when unknown (or
	// when the action is not admissible). With an empty Admissible it indexes
	// the NumAdmissible actions the producer chose from.
	ActionIndex int32 `json:"action_index"`
	// BehaviorLogProb is log π_B(a|s) under the policy that acted (≤ 0).
	BehaviorLogProb float64 `json:"behavior_log_prob"`
	// Reward is the training label for this step. For on-policy and swapped
	// trajectories it is the environment's reward: 0 on every step but the
	// last, which carries OutcomeReward. On an explorer trajectory before the
	// swap it equals DenseReward; the swapper replaces it.
	Reward float64 `json:"reward"`
	// DenseReward is the PRM's score r̂_t (explorer trajectories; provenance
	// only once swapped).
	DenseReward float64 `json:"dense_reward"`
	// StateKey identifies the world state before the action; equal keys mean
	// identical states (repeated-state counting, GiGPO grouping).
	StateKey uint64 `json:"state_key,string"`
	// TokenIDs and TokenLogProbs are optional, for LLM policies: token ids
	// are ≥ 0, and TokenLogProbs is empty or holds one log-prob (≤ 0) per id.
	TokenIDs      []int32   `json:"token_ids,omitempty"`
	TokenLogProbs []float32 `json:"token_log_probs,omitempty"`
}
