package swappersvc

import (
	"fmt"

	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
)

// admit reports why t cannot be one of its cycle's explorer trajectories,
// or nil. Three things are refused before the swap, whether or not the
// cycle is verified by replay:
//
//   - a record of a cycle that has no plan on the bus while the run's
//     learner plans its cycles: the learner announces a cycle before any
//     explorer plays it, so such a record was published ahead of its
//     cycle, under ids it guessed (a run with no plan at all is one whose
//     records a producer of its own makes, and is taken as it comes);
//   - a record of a planned cycle whose id the plan did not give out (its
//     nonce, a task of its pool: schemas.CyclePlan.CheckTrajectoryID);
//   - a record no episode of the environment could have produced
//     (rollout.CheckTrajectory): an outcome or success claim outside what
//     the environment pays, a behaviour log-prob no policy samples, an
//     action its admissible list disagrees with.
func (s *Service) admit(t *schemas.Trajectory, plan schemas.CyclePlan, planned bool) error {
	if !planned {
		if n := s.plans.count(); n > 0 {
			return fmt.Errorf("swappersvc: trajectory %s of cycle %d, which has no plan on the bus while the run's learner planned %d cycles: published ahead of its cycle", t.ID, t.Cycle, n)
		}
	} else if err := plan.CheckTrajectoryID(t); err != nil {
		return fmt.Errorf("swappersvc: trajectory %s is not one of cycle %d's: %w", t.ID, t.Cycle, err)
	}
	opts := s.cfg.EnvOptions
	if planned {
		opts = plan.EnvOptions
	}
	env, err := s.envs.Get(t.Env, opts)
	if err != nil {
		return fmt.Errorf("swappersvc: trajectory %s: environment %s: %w", t.ID, t.Env, err)
	}
	return rollout.CheckTrajectory(env, t, false)
}
