package rollout

import (
	"errors"
	"fmt"
	"slices"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/schemas"
)

// MinChoiceLogProb is the lowest behaviour log-probability a recorded
// choice may claim: an action picked from an admissible list, or one token
// of a sampled text. A sampler draws an alternative of probability p with
// probability p, so over 10¹² draws among at most 2²⁰ alternatives each
// the chance that any drawn alternative had log p < −100 is below
// 10¹²·2²⁰·e⁻¹⁰⁰ ≈ 4·10⁻²⁶. A lower value is no sample of the policy
// that acted but a forgery or a bug, and it is not harmless: the learner
// caps log-ratios at 20, so a step claiming log π_B = −10³⁰⁸ takes the
// capped ratio e²⁰ ≈ 5·10⁸ and outweighs its whole batch. A step that
// records its tokens (TokenIDs) is as many choices as it has tokens, since
// a text's log-prob is the sum of its tokens'; a step that records none is
// one choice.
const MinChoiceLogProb = -100

// ErrImplausible matches every ImplausibleError.
var ErrImplausible = errors.New("rollout: implausible trajectory")

// ImplausibleError says what about a trajectory no episode of its
// environment could have produced. It matches ErrImplausible.
type ImplausibleError struct {
	// ID is the trajectory's id; Field names the offending field, e.g.
	// "steps[3].behavior_log_prob".
	ID, Field, Reason string
}

func (e *ImplausibleError) Error() string {
	return fmt.Sprintf("rollout: trajectory %s: %s: %s", e.ID, e.Field, e.Reason)
}

// Is makes errors.Is(err, ErrImplausible) true.
func (e *ImplausibleError) Is(target error) bool { return target == ErrImplausible }

// CheckTrajectory reports why t, a valid trajectory (schemas.Validate),
// could not have been played in env as it claims, or nil. It checks what
// the schema cannot know without the environment and its contract:
//
//   - t is of env and no longer than env's step limit (envs.StepLimiter);
//   - its outcome and success are ones env pays (envs.BoundsOf): in the
//     reward range, two-valued where env is, a success exactly when the
//     outcome is the maximum where env says so;
//   - an outcome-labelled trajectory (on-policy, or swapped) pays 0 on every
//     step but the last, which pays the outcome (envs.StepResult);
//   - every step's behaviour log-prob is at least MinChoiceLogProb per
//     choice it records, and every token log-prob at least
//     MinChoiceLogProb;
//   - every action agrees with its admissible list: an index names the
//     action's text (the schema checks that), and −1 ("not admissible")
//     names an action that is not in the list. With readable set every
//     step must also name its action's index in a non-empty list, as the
//     built-in policy needs to train on it (policy.StatesFromTrajectory).
//
// Errors are *ImplausibleError (ErrImplausible).
func CheckTrajectory(env envs.Env, t *schemas.Trajectory, readable bool) error {
	bad := func(field, format string, args ...any) error {
		return &ImplausibleError{ID: t.ID, Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	if t.Env != env.Name() {
		return bad("env", "%q, but it was checked as %s's", t.Env, env.Name())
	}
	if l, ok := env.(envs.StepLimiter); ok && len(t.Steps) > l.MaxSteps() {
		return bad("steps", "%d steps, but %s ends an episode after %d", len(t.Steps), env.Name(), l.MaxSteps())
	}
	if err := envs.BoundsOf(env).CheckOutcome(t.OutcomeReward, t.Success); err != nil {
		return bad("outcome_reward", "%v", err)
	}
	for i := range t.Steps {
		if err := checkStep(t, i, readable); err != nil {
			return err
		}
	}
	return nil
}

// checkStep checks step i of t: its reward, log-probs and action.
func checkStep(t *schemas.Trajectory, i int, readable bool) error {
	st := &t.Steps[i]
	bad := func(field, format string, args ...any) error {
		return &ImplausibleError{ID: t.ID, Field: fmt.Sprintf("steps[%d].%s", i, field), Reason: fmt.Sprintf(format, args...)}
	}
	if t.Source == schemas.SourceOnPolicy || t.Swapped {
		want := 0.0
		if i == len(t.Steps)-1 {
			want = t.OutcomeReward
		}
		if st.Reward != want {
			return bad("reward", "%v, but the environment pays %v there (0 until the last step, which pays the outcome)", st.Reward, want)
		}
	}
	choices := max(1, len(st.TokenIDs))
	if floor := float64(MinChoiceLogProb * choices); st.BehaviorLogProb < floor {
		return bad("behavior_log_prob", "%v is below %v (%d choice(s) of at least %d each): no policy samples that", st.BehaviorLogProb, floor, choices, MinChoiceLogProb)
	}
	for j, lp := range st.TokenLogProbs {
		if lp < MinChoiceLogProb {
			return bad(fmt.Sprintf("token_log_probs[%d]", j), "%v is below %d: no policy samples that", lp, MinChoiceLogProb)
		}
	}
	return checkAction(st, readable, bad)
}

// checkAction checks a step's action against its admissible list.
func checkAction(st *schemas.Step, readable bool, bad func(field, format string, args ...any) error) error {
	n := len(st.Admissible)
	switch idx := int(st.ActionIndex); {
	case idx >= n && n > 0, idx < -1:
		return bad("action_index", "%d out of range of %d admissible actions", idx, n)
	case idx >= 0 && n > 0 && st.Admissible[idx] != st.Action:
		return bad("action_index", "admissible[%d] is %q, not the action %q", idx, st.Admissible[idx], st.Action)
	case idx == -1 && slices.Contains(st.Admissible, st.Action):
		return bad("action_index", "-1 (not admissible), but the action %q is in the admissible list", st.Action)
	case readable && n == 0:
		return bad("admissible", "no admissible actions recorded: the built-in policy cannot train on the step")
	case readable && idx == -1:
		return bad("action_index", "-1: the action %q is not one of the %d admissible actions, and the built-in policy trains only on those", st.Action, n)
	}
	return nil
}
