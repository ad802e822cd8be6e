package schemas

import (
	"fmt"
	"math"
	"time"
	"unicode/utf8"
)

// Validate reports whether t is a well-formed trajectory: identity fields set
// and safe, numbers finite and in range, every step consistent, and every
// size within the limits in limits.go. It returns a *ValidationError
// (matching ErrInvalid) naming the first offending field, e.g.
// "steps[3].behavior_log_prob".
func (t *Trajectory) Validate() error {
	_, err := t.validate()
	return err
}

// validate is Validate that also returns an estimate of the encoded size,
// which the encoders use to size their buffer once.
func (t *Trajectory) validate() (int, error) {
	if t == nil {
		return 0, &ValidationError{Field: "trajectory", Reason: "nil"}
	}
	if err := t.validateHeader(); err != nil {
		return 0, err
	}
	if err := t.validateCounts(); err != nil {
		return 0, err
	}
	size := t.rowBytes() * len(t.Steps)
	for i := range t.Steps {
		n, err := t.Steps[i].validate(i)
		if err != nil {
			return 0, err
		}
		size += n
	}
	if size > MaxMessageBytes {
		return 0, &ValidationError{Field: "trajectory",
			Reason: fmt.Sprintf("encodes to about %d bytes, at most %d", size, MaxMessageBytes)}
	}
	return size, nil
}

// validateHeader checks the trajectory-level fields.
func (t *Trajectory) validateHeader() error {
	if err := checkMsgID("id", t.ID); err != nil {
		return err
	}
	if err := CheckRunName(t.Run); err != nil {
		return err
	}
	switch {
	case !t.Source.Valid():
		return &ValidationError{Field: "source", Reason: fmt.Sprintf("unknown source %q", t.Source)}
	case t.Cycle < 0:
		return &ValidationError{Field: "cycle", Reason: fmt.Sprintf("%d is negative", t.Cycle)}
	case t.PolicyVersion < 0:
		return &ValidationError{Field: "policy_version", Reason: fmt.Sprintf("%d is negative", t.PolicyVersion)}
	case !isFinite(t.OutcomeReward) || t.OutcomeReward < 0 || t.OutcomeReward > 1:
		return &ValidationError{Field: "outcome_reward", Reason: fmt.Sprintf("%v not in [0, 1]", t.OutcomeReward)}
	case !timeRepresentable(t.CreatedAt):
		return &ValidationError{Field: "created_at",
			Reason: fmt.Sprintf("%v outside the nanosecond range 1678..2262 (leave it zero if unknown)", t.CreatedAt)}
	}
	texts := [...]struct{ field, value string }{
		{"producer", t.Producer}, {"env", t.Env}, {"task_id", t.TaskID}, {"task_type", t.TaskType},
		{"split", t.Split}, {"instruction", t.Instruction}, {"group_id", t.GroupID},
	}
	for _, x := range texts {
		if reason := textProblem(x.value); reason != "" {
			return &ValidationError{Field: x.field, Reason: reason}
		}
	}
	return nil
}

// validateCounts checks the number of steps and the priority keys.
func (t *Trajectory) validateCounts() error {
	n := len(t.Steps)
	switch {
	case n == 0:
		return &ValidationError{Field: "steps", Reason: "no steps (a trajectory has at least one)"}
	case n > MaxSteps:
		return &ValidationError{Field: "steps", Reason: fmt.Sprintf("%d steps, at most %d", n, MaxSteps)}
	case t.DistinctStates < 0:
		return &ValidationError{Field: "distinct_states", Reason: fmt.Sprintf("%d is negative", t.DistinctStates)}
	case t.RepeatedVisits < 0:
		return &ValidationError{Field: "repeated_visits", Reason: fmt.Sprintf("%d is negative", t.RepeatedVisits)}
	case int(t.DistinctStates)+int(t.RepeatedVisits) > n:
		return &ValidationError{Field: "distinct_states",
			Reason: fmt.Sprintf("distinct %d + repeated %d exceed the %d steps", t.DistinctStates, t.RepeatedVisits, n)}
	}
	return nil
}

// rowBytes estimates the wire bytes of the trajectory columns in one row
// (they are repeated on every row).
func (t *Trajectory) rowBytes() int {
	const fixed = 20 * 8 // numeric columns and string offsets, rounded up
	return fixed + len(t.ID) + len(t.Run) + len(t.Source) + len(t.Producer) + len(t.Env) +
		len(t.TaskID) + len(t.TaskType) + len(t.Split) + len(t.Instruction) + len(t.GroupID)
}

// validate checks step i and returns an estimate of its wire bytes.
func (s *Step) validate(i int) (int, error) {
	if err := s.validateText(i); err != nil {
		return 0, err
	}
	if err := s.validateAction(i); err != nil {
		return 0, err
	}
	if err := s.validateNumbers(i); err != nil {
		return 0, err
	}
	size := 64 + len(s.Observation) + len(s.Action) + 12*len(s.TokenIDs)
	for _, a := range s.Admissible {
		size += 4 + len(a)
	}
	return size, nil
}

// validateText checks the step's strings and list sizes.
func (s *Step) validateText(i int) error {
	if reason := textProblem(s.Observation); reason != "" {
		return stepError(i, "observation", reason)
	}
	if reason := textProblem(s.Action); reason != "" {
		return stepError(i, "action", reason)
	}
	if len(s.Admissible) > MaxAdmissible {
		return stepError(i, "admissible", fmt.Sprintf("%d actions, at most %d", len(s.Admissible), MaxAdmissible))
	}
	for j, a := range s.Admissible {
		if reason := textProblem(a); reason != "" {
			return stepError(i, fmt.Sprintf("admissible[%d]", j), reason)
		}
	}
	return nil
}

// validateAction checks NumAdmissible and ActionIndex against the list.
func (s *Step) validateAction(i int) error {
	n := len(s.Admissible)
	if int(s.NumAdmissible) < n {
		return stepError(i, "num_admissible", fmt.Sprintf("%d is less than the %d listed actions", s.NumAdmissible, n))
	}
	idx := s.ActionIndex
	switch {
	case idx == -1:
		return nil
	case idx < -1:
		return stepError(i, "action_index", fmt.Sprintf("%d is negative (use -1 for unknown)", idx))
	case n > 0 && int(idx) >= n:
		return stepError(i, "action_index", fmt.Sprintf("%d out of range of %d admissible actions", idx, n))
	case n > 0 && s.Admissible[idx] != s.Action:
		return stepError(i, "action_index", fmt.Sprintf("admissible[%d] is %q, not the action %q", idx, s.Admissible[idx], s.Action))
	case n == 0 && idx >= s.NumAdmissible:
		return stepError(i, "action_index", fmt.Sprintf("%d out of range of num_admissible %d", idx, s.NumAdmissible))
	}
	return nil
}

// validateNumbers checks the step's log-probs, rewards and tokens.
func (s *Step) validateNumbers(i int) error {
	switch {
	case !isFinite(s.BehaviorLogProb) || s.BehaviorLogProb > 0:
		return stepError(i, "behavior_log_prob", fmt.Sprintf("%v is not a finite log-probability ≤ 0", s.BehaviorLogProb))
	case !isFinite(s.Reward):
		return stepError(i, "reward", fmt.Sprintf("%v is not finite", s.Reward))
	case !isFinite(s.DenseReward):
		return stepError(i, "dense_reward", fmt.Sprintf("%v is not finite", s.DenseReward))
	case len(s.TokenIDs) > MaxTokens:
		return stepError(i, "token_ids", fmt.Sprintf("%d tokens, at most %d", len(s.TokenIDs), MaxTokens))
	case len(s.TokenLogProbs) != 0 && len(s.TokenLogProbs) != len(s.TokenIDs):
		return stepError(i, "token_log_probs",
			fmt.Sprintf("%d log-probs for %d token ids (give one per token, or none)", len(s.TokenLogProbs), len(s.TokenIDs)))
	}
	for j, id := range s.TokenIDs {
		if id < 0 {
			return stepError(i, fmt.Sprintf("token_ids[%d]", j), fmt.Sprintf("%d is negative", id))
		}
	}
	for j, lp := range s.TokenLogProbs {
		if !isFinite(float64(lp)) || lp > 0 {
			return stepError(i, fmt.Sprintf("token_log_probs[%d]", j), fmt.Sprintf("%v is not a finite log-probability ≤ 0", lp))
		}
	}
	return nil
}

func stepError(i int, field, reason string) error {
	return &ValidationError{Field: fmt.Sprintf("steps[%d].%s", i, field), Reason: reason}
}

// textProblem returns why s is not an acceptable text field, or "".
func textProblem(s string) string {
	if len(s) > MaxTextBytes {
		return fmt.Sprintf("%d bytes, at most %d", len(s), MaxTextBytes)
	}
	if !utf8.ValidString(s) {
		return "not valid UTF-8"
	}
	return ""
}

// checkMsgID checks a string that becomes a Nats-Msg-Id header: non-empty,
// within MaxTextBytes, and free of spaces and control characters.
func checkMsgID(field, s string) error {
	if s == "" {
		return &ValidationError{Field: field, Reason: "empty"}
	}
	if reason := textProblem(s); reason != "" {
		return &ValidationError{Field: field, Reason: reason}
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == 0x7f {
			return &ValidationError{Field: field, Reason: fmt.Sprintf("byte %d is a space or control character (%q)", i, c)}
		}
	}
	return nil
}

// CheckRunName reports whether run is usable as a run name: 1 to
// MaxRunNameBytes characters from [A-Za-z0-9_-], so that it is a valid token
// in every NATS subject, consumer, stream and bucket name it is part of.
func CheckRunName(run string) error {
	if run == "" {
		return &ValidationError{Field: "run", Reason: "empty"}
	}
	if len(run) > MaxRunNameBytes {
		return &ValidationError{Field: "run", Reason: fmt.Sprintf("%d bytes, at most %d", len(run), MaxRunNameBytes)}
	}
	for i := 0; i < len(run); i++ {
		if !isNameByte(run[i]) {
			return &ValidationError{Field: "run",
				Reason: fmt.Sprintf("%q has %q at byte %d; use only letters, digits, '_' and '-'", run, run[i], i)}
		}
	}
	return nil
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

func isFinite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// The range of instants an Arrow timestamp[ns] can hold.
var (
	minNanoTime = time.Unix(0, math.MinInt64)
	maxNanoTime = time.Unix(0, math.MaxInt64)
)

// timeRepresentable reports whether t is zero (encoded as null) or fits in
// int64 nanoseconds since the Unix epoch.
func timeRepresentable(t time.Time) bool {
	return t.IsZero() || !t.Before(minNanoTime) && !t.After(maxNanoTime)
}
