package schemas

import (
	"encoding/json"
	"fmt"
	"math"
)

// BatchFormat is the version of the training-batch layout (TrainBatch)
// written by this code: the value of BatchFormatKey in the Arrow schema
// metadata. Decoders reject any other version with ErrSchemaVersion.
const BatchFormat = 1

// Size limits of a training batch, enforced by Validate, EncodeTrainBatch
// and DecodeTrainBatch (besides the per-field limits of a trajectory:
// MaxTextBytes, MaxAdmissible, MaxTokens).
const (
	// MaxTrainBatchRows is the most steps (rows) one training batch holds.
	MaxTrainBatchRows = 1 << 18
	// MaxTrainBatchBytes is the largest encoded training batch.
	MaxTrainBatchBytes = 64 << 20
	// MaxTrainerConfigBytes bounds TrainBatch.Trainer.
	MaxTrainerConfigBytes = 16 << 10
	// MaxTrainerRNGBytes bounds TrainBatch.TrainerRNG.
	MaxTrainerRNGBytes = 256
)

// TrainBatch is one learner update's data for a trainer: every step of the
// update's on- and off-policy trajectories with the advantage, swap
// coefficient and weight the learner assigned, and the loss settings. It
// travels as one Arrow IPC stream on rspo.<run>.batch (docs/protocol.md,
// "External trainers"): a row per step, the batch fields in the schema
// metadata.
//
// A trainer holding π_θ at PolicyVersion applies it, stores version
// PolicyVersion+1 and announces it with policy.published. The log-probs
// that need π_θ's weights — log π_old of every step, log π_ref for the KL
// term — are the trainer's to compute; everything else is here.
type TrainBatch struct {
	// Run names the run.
	Run string `json:"run"`
	// Update is the learner update this batch makes, 1 for the first.
	Update int64 `json:"update"`
	// PolicyVersion is the π_θ version the batch was assembled against:
	// the trainer's starting weights. The result is PolicyVersion+1.
	PolicyVersion int64 `json:"policy_version"`
	// Loss holds the objective's settings.
	Loss BatchLoss `json:"loss"`
	// Trainer is the learner's trainer configuration as JSON (the
	// built-in trainer's learner.Config in portable form), for trainers
	// that reproduce the built-in optimiser; others may ignore it.
	Trainer json.RawMessage `json:"trainer,omitempty"`
	// TrainerRNG is the built-in trainer's random source after assembling
	// the batch (math/rand/v2 PCG state), from which a trainer that
	// reproduces it shuffles minibatches; others may ignore it.
	TrainerRNG []byte `json:"trainer_rng,omitempty"`
	// Steps are the rows, grouped by trajectory in step order.
	Steps []BatchStep `json:"steps"`
}

// BatchLoss is what the trainer's loss needs besides the rows
// (docs/protocol.md, "External trainers", has the formula).
type BatchLoss struct {
	// Algo is the base algorithm the advantages were computed for: grpo or
	// gigpo (PPO's critic lives in the trainer and cannot be carried).
	Algo string `json:"algo"`
	// EpsOn and EpsOff are the clip ε of the on- and off-policy terms.
	EpsOn  float64 `json:"eps_on"`
	EpsOff float64 `json:"eps_off"`
	// OffRatio is "behaviour" (r = π_θ/π_B clipped around c = π_old/π_B)
	// or "old" (r = π_θ/π_old clipped around 1).
	OffRatio string `json:"off_ratio"`
	// Beta weighs KL(π_θ‖π_ref); 0 is no KL term.
	Beta float64 `json:"beta"`
	// EntropyCoef weighs an entropy bonus.
	EntropyCoef float64 `json:"entropy_coef"`
	// Alpha is α of eq. 1, the off-policy term's share.
	Alpha float64 `json:"alpha"`
	// WeightOn and WeightOff are the per-step weights of the on- and
	// off-policy terms over the whole batch ((1−α)/n_on and α/n_off, or
	// 1/n when only one kind is present): BatchStep.Weight of every row of
	// that kind.
	WeightOn  float64 `json:"weight_on"`
	WeightOff float64 `json:"weight_off"`
}

// BatchStep is one row: a step of a trajectory of the batch.
type BatchStep struct {
	// TrajectoryID names the step's trajectory; Step is its index in it.
	TrajectoryID string `json:"trajectory_id"`
	Step         int32  `json:"step"`
	// TaskID and GroupID are the trajectory's task and rollout group.
	TaskID  string `json:"task_id"`
	GroupID string `json:"group_id"`
	// NormGroup is the index of the normalisation group the learner put the
	// trajectory in (on-policy group of its task, with the buffer records
	// joined), for the trainer's figures.
	NormGroup int32 `json:"norm_group"`
	// OffPolicy marks buffer (explorer) trajectories.
	OffPolicy bool `json:"off_policy"`
	// GeneratingVersion is the policy version that acted.
	GeneratingVersion int64 `json:"generating_version"`
	// Instruction, Observation, Admissible and Action are what the agent
	// saw and did; ActionIndex indexes Action in Admissible, -1 when the
	// producer chose from no list or its action is not among them (an LLM
	// policy's free text), which the built-in policy cannot train on.
	Instruction string   `json:"instruction"`
	Observation string   `json:"observation"`
	Admissible  []string `json:"admissible,omitempty"`
	Action      string   `json:"action"`
	ActionIndex int32    `json:"action_index"`
	// TokenIDs and TokenLogProbs are an LLM policy's tokens of the action
	// and their log-probs under the behaviour policy (optional).
	TokenIDs      []int32   `json:"token_ids,omitempty"`
	TokenLogProbs []float32 `json:"token_log_probs,omitempty"`
	// BehaviorLogProb is log π_B(a|s) of the policy that acted (≤ 0). For
	// on-policy rows it is also log π_old.
	BehaviorLogProb float64 `json:"behavior_log_prob"`
	// Reward is the step's training reward label.
	Reward float64 `json:"reward"`
	// Advantage is the step's advantage A_t.
	Advantage float64 `json:"advantage"`
	// SwapCoef is the optional swap term's coefficient c_j (0 without).
	SwapCoef float64 `json:"swap_coef"`
	// Weight is the step's weight in the loss (Loss.WeightOn or WeightOff).
	Weight float64 `json:"weight"`
	// OutcomeReward and Success are the trajectory's outcome.
	OutcomeReward float64 `json:"outcome_reward"`
	Success       bool    `json:"success"`
}

// BatchID is the message id of run's batch for update u: "<run>/batch/<u>".
func BatchID(run string, update int64) string { return fmt.Sprintf("%s/batch/%d", run, update) }

// ID is the batch's message id (BatchID).
func (b *TrainBatch) ID() string { return BatchID(b.Run, b.Update) }

// Trajectories counts the batch's trajectories.
func (b *TrainBatch) Trajectories() int {
	n := 0
	for i := range b.Steps {
		if b.Steps[i].Step == 0 {
			n++
		}
	}
	return n
}

// Validate reports the first problem of the batch as a *ValidationError
// (ErrInvalid): bounded sizes, finite values, consistent rows (every
// trajectory's steps contiguous and numbered 0, 1, ..., its fields the same
// on each), and versions that can be (PolicyVersion < Update).
func (b *TrainBatch) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &ValidationError{Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	if err := CheckRunName(b.Run); err != nil {
		return err
	}
	switch {
	case b.Update < 1:
		return bad("update", "%d, want ≥ 1", b.Update)
	case b.PolicyVersion < 0 || b.PolicyVersion >= b.Update:
		return bad("policy_version", "%d: a batch of update %d starts from a version in 0..%d", b.PolicyVersion, b.Update, b.Update-1)
	case len(b.Trainer) > MaxTrainerConfigBytes:
		return bad("trainer", "%d bytes, at most %d", len(b.Trainer), MaxTrainerConfigBytes)
	case len(b.Trainer) > 0 && !json.Valid(b.Trainer):
		return bad("trainer", "not valid JSON")
	case len(b.TrainerRNG) > MaxTrainerRNGBytes:
		return bad("trainer_rng", "%d bytes, at most %d", len(b.TrainerRNG), MaxTrainerRNGBytes)
	case len(b.Steps) == 0:
		return bad("steps", "no rows")
	case len(b.Steps) > MaxTrainBatchRows:
		return bad("steps", "%d rows, at most %d", len(b.Steps), MaxTrainBatchRows)
	}
	if err := b.Loss.validate(); err != nil {
		return err
	}
	return b.validateRows()
}

func (l BatchLoss) validate() error {
	bad := func(field, format string, args ...any) error {
		return &ValidationError{Field: "loss." + field, Reason: fmt.Sprintf(format, args...)}
	}
	in := func(v, lo, hi float64) bool { return v >= lo && v <= hi }
	switch {
	case l.Algo != "grpo" && l.Algo != "gigpo":
		return bad("algo", "%q: a batch carries grpo or gigpo advantages", l.Algo)
	case l.OffRatio != "behaviour" && l.OffRatio != "old":
		return bad("off_ratio", "%q is not behaviour or old", l.OffRatio)
	case !in(l.EpsOn, 1e-6, 10) || !in(l.EpsOff, 1e-6, 10):
		return bad("eps", "eps_on %v and eps_off %v must be in (0, 10]", l.EpsOn, l.EpsOff)
	case !in(l.Beta, 0, 100) || !in(l.EntropyCoef, 0, 100):
		return bad("beta", "beta %v and entropy_coef %v must be in [0, 100]", l.Beta, l.EntropyCoef)
	case !in(l.Alpha, 0, 1) || l.Alpha == 1:
		return bad("alpha", "%v not in [0, 1)", l.Alpha)
	case !in(l.WeightOn, 0, 1) || !in(l.WeightOff, 0, 1):
		return bad("weight", "weight_on %v and weight_off %v must be in [0, 1]", l.WeightOn, l.WeightOff)
	}
	return nil
}

// validateRows checks every row and the trajectory structure.
func (b *TrainBatch) validateRows() error {
	trajectories := 0
	for i := range b.Steps {
		st := &b.Steps[i]
		if err := st.validate(); err != nil {
			return inRow(i, err)
		}
		if st.Step == 0 { // a trajectory starts (a buffer record sampled twice starts twice)
			if trajectories++; trajectories > MaxBatchTrajectories {
				return &ValidationError{Field: "steps", Reason: fmt.Sprintf("more than %d trajectories", MaxBatchTrajectories)}
			}
			continue
		}
		if i == 0 || !st.sameTrajectory(&b.Steps[i-1]) || st.Step != b.Steps[i-1].Step+1 {
			return inRow(i, &ValidationError{Field: "step", Reason: fmt.Sprintf("step %d of %q does not follow the row before (a trajectory's rows are contiguous, numbered from 0, its fields alike)", st.Step, st.TrajectoryID)})
		}
	}
	for i := range b.Steps {
		if int(b.Steps[i].NormGroup) >= trajectories {
			return inRow(i, &ValidationError{Field: "norm_group", Reason: fmt.Sprintf("%d, but the batch has %d trajectories", b.Steps[i].NormGroup, trajectories)})
		}
	}
	return nil
}

// sameTrajectory reports whether o has s's trajectory fields.
func (s *BatchStep) sameTrajectory(o *BatchStep) bool {
	return s.TrajectoryID == o.TrajectoryID && s.TaskID == o.TaskID && s.GroupID == o.GroupID &&
		s.NormGroup == o.NormGroup && s.OffPolicy == o.OffPolicy && s.GeneratingVersion == o.GeneratingVersion &&
		s.Instruction == o.Instruction && s.OutcomeReward == o.OutcomeReward && s.Success == o.Success
}

func (s *BatchStep) validate() error {
	bad := func(field, format string, args ...any) error {
		return &ValidationError{Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	for _, f := range []struct {
		name, v string
	}{{"trajectory_id", s.TrajectoryID}, {"task_id", s.TaskID}, {"group_id", s.GroupID},
		{"instruction", s.Instruction}, {"observation", s.Observation}, {"action", s.Action}} {
		if len(f.v) > MaxTextBytes {
			return bad(f.name, "%d bytes, at most %d", len(f.v), MaxTextBytes)
		}
	}
	switch {
	case s.TrajectoryID == "":
		return bad("trajectory_id", "empty")
	case s.Step < 0 || s.Step >= MaxSteps:
		return bad("step", "%d not in 0..%d", s.Step, MaxSteps-1)
	case s.NormGroup < 0:
		return bad("norm_group", "%d negative", s.NormGroup)
	case s.GeneratingVersion < 0:
		return bad("generating_version", "%d negative", s.GeneratingVersion)
	case len(s.Admissible) > MaxAdmissible:
		return bad("admissible", "%d actions, at most %d", len(s.Admissible), MaxAdmissible)
	case s.ActionIndex < -1 || len(s.Admissible) > 0 && int(s.ActionIndex) >= len(s.Admissible):
		return bad("action_index", "%d not in -1..%d", s.ActionIndex, len(s.Admissible)-1)
	case s.ActionIndex >= 0 && len(s.Admissible) > 0 && s.Admissible[s.ActionIndex] != s.Action:
		return bad("action", "%q is not admissible[%d] %q", s.Action, s.ActionIndex, s.Admissible[s.ActionIndex])
	case len(s.TokenIDs) > MaxTokens:
		return bad("token_ids", "%d tokens, at most %d", len(s.TokenIDs), MaxTokens)
	case len(s.TokenLogProbs) != 0 && len(s.TokenLogProbs) != len(s.TokenIDs):
		return bad("token_log_probs", "%d log-probs for %d tokens", len(s.TokenLogProbs), len(s.TokenIDs))
	case !isFinite(s.BehaviorLogProb) || s.BehaviorLogProb > 1e-9:
		return bad("behavior_log_prob", "%v not a finite value ≤ 0", s.BehaviorLogProb)
	case !isFinite(s.Weight) || s.Weight < 0 || s.Weight > 1:
		return bad("weight", "%v not in [0, 1]", s.Weight)
	}
	for _, a := range s.Admissible {
		if len(a) > MaxTextBytes {
			return bad("admissible", "an action of %d bytes, at most %d", len(a), MaxTextBytes)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"reward", s.Reward}, {"advantage", s.Advantage}, {"swap_coef", s.SwapCoef}, {"outcome_reward", s.OutcomeReward}} {
		if !isFinite(f.v) || math.Abs(f.v) > 1e12 {
			return bad(f.name, "%v is not a finite value of magnitude ≤ 1e12", f.v)
		}
	}
	for k, id := range s.TokenIDs {
		if id < 0 {
			return bad(fmt.Sprintf("token_ids[%d]", k), "%d negative", id)
		}
	}
	for k, lp := range s.TokenLogProbs {
		if !isFinite(float64(lp)) || lp > 0 {
			return bad(fmt.Sprintf("token_log_probs[%d]", k), "%v not a finite value ≤ 0", lp)
		}
	}
	return nil
}

// inRow names the row of a *ValidationError: "steps[i].field".
func inRow(i int, err error) error {
	if ve, ok := err.(*ValidationError); ok {
		return &ValidationError{Field: fmt.Sprintf("steps[%d].%s", i, ve.Field), Reason: ve.Reason}
	}
	return err
}

// BatchApplied is the Config of a policy.published event a trainer
// publishes for a batch: it says the version was trained (not published by
// the learner) and from which batch, so the learner accepts it as its
// update's result.
type BatchApplied struct {
	// Trainer names the trainer instance.
	Trainer string `json:"trainer"`
	// Batch is the batch's id (BatchID) and FromVersion its PolicyVersion.
	Batch       string `json:"batch"`
	FromVersion int64  `json:"from_version"`
}

// BatchAppliedOf returns the BatchApplied an event carries in Config; ok is
// false for an event that carries none (the learner's own).
func BatchAppliedOf(e Event) (BatchApplied, bool) {
	if e.Type != EventPolicyPublished || len(e.Config) == 0 {
		return BatchApplied{}, false
	}
	var a BatchApplied
	if err := json.Unmarshal(e.Config, &a); err != nil || a.Batch == "" {
		return BatchApplied{}, false
	}
	return a, true
}
