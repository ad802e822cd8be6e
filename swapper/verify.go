package swapper

import (
	"errors"
	"fmt"
	"math"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
)

// outcomeTolerance is how far a claimed outcome reward may be from the
// replayed one (they are computed by the same code; this only absorbs a
// float round trip).
const outcomeTolerance = 1e-9

// Verifier replays a trajectory's actions in its environment, from the
// task's seed, and checks that the claims the buffer relies on hold: the
// state key before every action, that the episode ends exactly with the last
// action (or has not ended when the trajectory claims no outcome), and the
// outcome reward and success flag. It is safe for concurrent use.
type Verifier struct {
	opts map[string]string
	envs rollout.EnvCache
}

// NewVerifier returns a verifier that builds environments with opts (e.g.
// {"preset": "hard"}; nil for the defaults) — the options the producers used.
func NewVerifier(opts map[string]string) *Verifier {
	return &Verifier{opts: opts}
}

// Verify replays t in an environment built with the verifier's options. It
// returns nil when every claim holds, a *ForgeryError (ErrForged) naming
// the first claim the replay disproves, or an error wrapping
// ErrUnverifiable when the replay itself is impossible (unknown
// environment, a task the environment refuses).
func (v *Verifier) Verify(t *schemas.Trajectory) error { return v.VerifyWith(t, v.opts) }

// VerifyWith is Verify in an environment built with opts, e.g. those of the
// cycle plan the trajectory was explored under.
func (v *Verifier) VerifyWith(t *schemas.Trajectory, opts map[string]string) error {
	env, err := v.envs.Get(t.Env, opts)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnverifiable, err)
	}
	ep, err := env.Reset(envs.Task{ID: t.TaskID, Type: t.TaskType, Split: t.Split, Seed: t.TaskSeed, Instruction: t.Instruction})
	if err != nil {
		return fmt.Errorf("%w: reset task %s: %v", ErrUnverifiable, t.TaskID, err)
	}
	for i := range t.Steps {
		if err := replayStep(ep, i, &t.Steps[i]); err != nil {
			return err
		}
	}
	return checkOutcome(ep, t)
}

func replayStep(ep envs.Episode, i int, s *schemas.Step) error {
	if ep.Done() {
		return &ForgeryError{Step: i, Claim: "steps",
			Detail: fmt.Sprintf("the episode ended after %d actions, the trajectory has more", i)}
	}
	if got := ep.StateKey(); got != s.StateKey {
		return &ForgeryError{Step: i, Claim: "state_key",
			Detail: fmt.Sprintf("claimed %#x, replay gives %#x", s.StateKey, got)}
	}
	if _, err := ep.Step(s.Action); err != nil {
		if errors.Is(err, envs.ErrEpisodeDone) {
			return &ForgeryError{Step: i, Claim: "steps", Detail: err.Error()}
		}
		return fmt.Errorf("%w: step %d: %v", ErrUnverifiable, i, err)
	}
	return nil
}

// checkOutcome compares the claimed outcome with the replayed episode's. An
// episode that has not ended has outcome 0 and no success.
func checkOutcome(ep envs.Episode, t *schemas.Trajectory) error {
	last := len(t.Steps) - 1
	outcome, success := 0.0, false
	if ep.Done() {
		outcome, success = ep.Outcome(), ep.Success()
	}
	if math.Abs(outcome-t.OutcomeReward) > outcomeTolerance {
		return &ForgeryError{Step: last, Claim: "outcome_reward",
			Detail: fmt.Sprintf("claimed %v, replay gives %v (episode done: %v)", t.OutcomeReward, outcome, ep.Done())}
	}
	if success != t.Success {
		return &ForgeryError{Step: last, Claim: "success",
			Detail: fmt.Sprintf("claimed %v, replay gives %v (episode done: %v)", t.Success, success, ep.Done())}
	}
	return nil
}
