package swapper

import (
	"errors"
	"fmt"
)

// Sentinel errors. The typed errors below match them with errors.Is.
var (
	// ErrNotExplore means the trajectory is not an explorer trajectory; only
	// those are relabelled into the buffer.
	ErrNotExplore = errors.New("swapper: not an explorer trajectory")
	// ErrAlreadySwapped means the trajectory's labels were swapped before.
	ErrAlreadySwapped = errors.New("swapper: trajectory already swapped")
	// ErrForged is the class of every ForgeryError: replay disproves a claim.
	ErrForged = errors.New("swapper: claim disproved by replay")
	// ErrUnverifiable means verification was asked for but the trajectory
	// cannot be replayed (unknown environment, rejected task or action).
	ErrUnverifiable = errors.New("swapper: cannot verify")
)

// ForgeryError says which claim of a trajectory the replay disproved.
type ForgeryError struct {
	// Step is the step at which the claim fails (the last step for the
	// outcome claims).
	Step int
	// Claim is the disproved field: "state_key", "steps", "outcome_reward",
	// "success".
	Claim string
	// Detail gives the claimed and replayed values.
	Detail string
}

func (e *ForgeryError) Error() string {
	return fmt.Sprintf("swapper: %s disproved by replay at step %d: %s", e.Claim, e.Step, e.Detail)
}

// Is makes errors.Is(err, ErrForged) true.
func (e *ForgeryError) Is(target error) bool { return target == ErrForged }
