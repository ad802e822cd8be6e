package schemas

import (
	"errors"
	"fmt"
	"strconv"
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

// DecodeError says why bytes could not be read as an Arrow IPC trajectory
// stream: they are not Arrow IPC, they are truncated or corrupt, or they hold
// the wrong number of record batches. It matches ErrDecode with errors.Is.
type DecodeError struct {
	// Reason says what is wrong with the bytes.
	Reason string
	// Err is the underlying cause, if any (e.g. the Arrow reader's error).
	Err error
}

func (e *DecodeError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("schemas: cannot decode trajectory: %s: %v", e.Reason, e.Err)
	}
	return "schemas: cannot decode trajectory: " + e.Reason
}

// Is makes errors.Is(err, ErrDecode) true for every DecodeError.
func (e *DecodeError) Is(target error) bool { return target == ErrDecode }

// Unwrap returns the underlying cause.
func (e *DecodeError) Unwrap() error { return e.Err }

// SchemaError says that a message's Arrow schema is not the one this code
// writes: another schema version, no version at all, or columns that differ
// from ours. It matches ErrSchemaVersion with errors.Is.
type SchemaError struct {
	// Version is the rspo.schema_version found in the message ("" if none).
	Version string
	// Reason says what differs.
	Reason string
}

func (e *SchemaError) Error() string {
	if e.Version == strconv.Itoa(SchemaVersion) {
		return fmt.Sprintf("schemas: schema does not match version %d: %s", SchemaVersion, e.Reason)
	}
	return fmt.Sprintf("schemas: schema version %q not readable (this code reads %d): %s",
		e.Version, SchemaVersion, e.Reason)
}

// Is makes errors.Is(err, ErrSchemaVersion) true for every SchemaError.
func (e *SchemaError) Is(target error) bool { return target == ErrSchemaVersion }
