package schemas

import (
	"errors"
	"fmt"
)

// Sentinel errors. A ValidationError matches ErrInvalid with errors.Is.
var (
	// ErrInvalid is the class of every validation failure.
	ErrInvalid = errors.New("schemas: invalid record")
	// ErrSchemaVersion means the record was written by another schema version.
	ErrSchemaVersion = errors.New("schemas: unknown schema version")
	// ErrDecode means the bytes are not a well-formed Arrow IPC trajectory.
	ErrDecode = errors.New("schemas: cannot decode")
)

// ValidationError says which field of a record is wrong and why.
type ValidationError struct {
	// Field is the offending field, e.g. "steps[3].behavior_log_prob".
	Field string
	// Reason says what is wrong in words a user can act on.
	Reason string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("schemas: invalid %s: %s", e.Field, e.Reason)
}

// Is makes errors.Is(err, ErrInvalid) true for every ValidationError.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }
