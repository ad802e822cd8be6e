package envs

import (
	"fmt"
	"math"
)

// Range is the closed interval [Min, Max].
type Range struct{ Min, Max float64 }

// Contains reports whether v lies in the range; NaN never does.
func (r Range) Contains(v float64) bool { return v >= r.Min && v <= r.Max }

func (r Range) String() string { return fmt.Sprintf("[%v, %v]", r.Min, r.Max) }

// Bounds are the values an environment's episodes can pay. A consumer of
// recorded trajectories checks their claims against them, so a record no
// episode of the environment could have produced is refused before
// anything trains on it (rollout.CheckTrajectory).
type Bounds struct {
	// Reward holds every step's reward (StepResult.Reward: 0 until the
	// last step, which pays the outcome) and the outcome (Episode.Outcome).
	Reward Range
	// Score holds the graded score (Score: a Scorer's, else the outcome).
	Score Range
	// TwoValued says the outcome is only ever Reward.Min or Reward.Max (a
	// reward of success or failure), nothing between.
	TwoValued bool
	// SuccessPaysMax says an episode succeeds exactly when its outcome is
	// Reward.Max.
	SuccessPaysMax bool
}

// Validate reports whether b can describe an environment: finite ranges
// inside [0, 1] (the outcome range every environment keeps: envtest), each
// with Min ≤ Max.
func (b Bounds) Validate() error {
	for _, r := range []struct {
		name string
		r    Range
	}{{"reward", b.Reward}, {"score", b.Score}} {
		if math.IsNaN(r.r.Min) || math.IsNaN(r.r.Max) || r.r.Min < 0 || r.r.Max > 1 || r.r.Min > r.r.Max {
			return fmt.Errorf("envs: %s range %v: want 0 ≤ min ≤ max ≤ 1", r.name, r.r)
		}
	}
	return nil
}

// CheckOutcome reports why an episode could not have ended with this
// outcome and success, or nil.
func (b Bounds) CheckOutcome(outcome float64, success bool) error {
	switch {
	case !b.Reward.Contains(outcome):
		return fmt.Errorf("outcome %v outside the reward range %v", outcome, b.Reward)
	case b.TwoValued && outcome != b.Reward.Min && outcome != b.Reward.Max:
		return fmt.Errorf("outcome %v is neither %v nor %v (the environment pays success or failure)", outcome, b.Reward.Min, b.Reward.Max)
	case b.SuccessPaysMax && success != (outcome == b.Reward.Max):
		return fmt.Errorf("success %v with outcome %v: a success pays exactly %v", success, outcome, b.Reward.Max)
	}
	return nil
}

// Bounded is implemented by environments that declare their Bounds; both
// built-in environments do. An environment that does not is held to the
// protocol's outcome range [0, 1] only.
type Bounded interface {
	Bounds() Bounds
}

// BoundsOf returns env's declared bounds, or the protocol's: rewards and
// score in [0, 1], nothing more.
func BoundsOf(env Env) Bounds {
	if b, ok := env.(Bounded); ok {
		return b.Bounds()
	}
	return Bounds{Reward: Range{0, 1}, Score: Range{0, 1}}
}
