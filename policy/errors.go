package policy

import (
	"errors"
	"fmt"
)

// Sentinel errors. Typed errors below match them with errors.Is.
var (
	// ErrConfig is the class of every configuration problem.
	ErrConfig = errors.New("policy: invalid config")
	// ErrNoActions means a state has no admissible actions to choose from.
	ErrNoActions = errors.New("policy: no admissible actions")
	// ErrSnapshot is the class of every snapshot decoding failure.
	ErrSnapshot = errors.New("policy: bad snapshot")
	// ErrSnapshotChecksum means the snapshot's bytes were altered.
	ErrSnapshotChecksum = errors.New("policy: snapshot checksum mismatch")
	// ErrSnapshotVersion means the snapshot was written by another format
	// or feature version.
	ErrSnapshotVersion = errors.New("policy: unsupported snapshot version")
	// ErrShape means two objects that must share a layout do not (a gradient
	// and a policy of different configurations).
	ErrShape = errors.New("policy: shape mismatch")
	// ErrTrajectory means a trajectory cannot be turned into policy states.
	ErrTrajectory = errors.New("policy: unusable trajectory")
)

// ConfigError names one invalid Config field. It matches ErrConfig.
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("policy: invalid config %s: %s", e.Field, e.Reason)
}

// Is makes errors.Is(err, ErrConfig) true.
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }

// SnapshotError says why a snapshot could not be decoded. It wraps one of
// ErrSnapshotChecksum, ErrSnapshotVersion or nothing more specific, and
// always matches ErrSnapshot.
type SnapshotError struct {
	Reason string
	Err    error
}

func (e *SnapshotError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("policy: bad snapshot: %s: %v", e.Reason, e.Err)
	}
	return "policy: bad snapshot: " + e.Reason
}

// Unwrap returns the specific cause, if any.
func (e *SnapshotError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrSnapshot) true.
func (e *SnapshotError) Is(target error) bool { return target == ErrSnapshot }

// TrajectoryError says which step of a trajectory cannot be used. It
// matches ErrTrajectory.
type TrajectoryError struct {
	ID     string
	Step   int
	Reason string
}

func (e *TrajectoryError) Error() string {
	return fmt.Sprintf("policy: trajectory %q step %d: %s", e.ID, e.Step, e.Reason)
}

// Is makes errors.Is(err, ErrTrajectory) true.
func (e *TrajectoryError) Is(target error) bool { return target == ErrTrajectory }
