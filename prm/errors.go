package prm

import (
	"errors"
	"fmt"
)

// Sentinel errors. Errors returned by this package wrap one of them, so
// callers can test with errors.Is.
var (
	// ErrNotSnapshot means the bytes do not start with the PRM snapshot
	// magic: they are some other file.
	ErrNotSnapshot = errors.New("prm: not a PRM snapshot")
	// ErrSnapshotVersion means the snapshot was written by an unknown
	// format version.
	ErrSnapshotVersion = errors.New("prm: unknown snapshot format version")
	// ErrCorrupt means the snapshot is truncated, fails its checksum or
	// holds inconsistent sizes.
	ErrCorrupt = errors.New("prm: corrupt snapshot")
	// ErrUnknownFeaturizer means a snapshot names a featurizer that is not
	// registered in this binary.
	ErrUnknownFeaturizer = errors.New("prm: unknown featurizer")
	// ErrNotSnapshottable means the model's featurizer does not implement
	// SpecFeaturizer, so it cannot be written to a snapshot.
	ErrNotSnapshottable = errors.New("prm: featurizer cannot be snapshotted")
	// ErrTooFewTrajectories means there is not enough data to train with a
	// held-out split.
	ErrTooFewTrajectories = errors.New("prm: too few trajectories")
	// ErrInvalidConfig is the class of every configuration error.
	ErrInvalidConfig = errors.New("prm: invalid config")
	// ErrFeaturizer means a BatchFeaturizer could not featurize steps
	// (e.g. its inference server failed); the featurizer's own error is
	// wrapped beside it.
	ErrFeaturizer = errors.New("prm: featurizer failed")
	// ErrInvalidTrajectory means a training trajectory cannot be used.
	ErrInvalidTrajectory = errors.New("prm: invalid trajectory")
)

// ConfigError names a configuration field and what is wrong with it. It
// matches ErrInvalidConfig with errors.Is.
type ConfigError struct {
	// Field is the offending field, e.g. "HoldoutFraction".
	Field string
	// Reason says what to change.
	Reason string
}

func (e *ConfigError) Error() string { return fmt.Sprintf("prm: invalid %s: %s", e.Field, e.Reason) }

// Is makes errors.Is(err, ErrInvalidConfig) true.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }
