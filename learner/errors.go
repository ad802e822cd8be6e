package learner

import (
	"errors"
	"fmt"
)

// Sentinel errors.
var (
	// ErrConfig is the class of every configuration problem.
	ErrConfig = errors.New("learner: invalid config")
	// ErrBatch is the class of every problem with the trajectories given to
	// Update; the policy is left unchanged.
	ErrBatch = errors.New("learner: unusable batch")
)

// ConfigError names one invalid Config field. It matches ErrConfig.
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("learner: invalid config %s: %s", e.Field, e.Reason)
}

// Is makes errors.Is(err, ErrConfig) true.
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }

// BatchError says which trajectory of a batch cannot be used and why. It
// matches ErrBatch and wraps the cause (e.g. a policy.TrajectoryError).
type BatchError struct {
	// ID is the trajectory id; OffPolicy says which list it was in.
	ID        string
	OffPolicy bool
	Reason    string
	Err       error
}

func (e *BatchError) Error() string {
	kind := "on-policy"
	if e.OffPolicy {
		kind = "off-policy"
	}
	if e.Err != nil {
		return fmt.Sprintf("learner: %s trajectory %q: %s: %v", kind, e.ID, e.Reason, e.Err)
	}
	return fmt.Sprintf("learner: %s trajectory %q: %s", kind, e.ID, e.Reason)
}

// Unwrap returns the cause.
func (e *BatchError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrBatch) true.
func (e *BatchError) Is(target error) bool { return target == ErrBatch }
