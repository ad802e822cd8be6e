package streams

import (
	"errors"
	"fmt"
)

// Sentinel errors. The typed errors below match them with errors.Is.
var (
	// ErrInvalidName means a run or component name cannot be a subject token.
	ErrInvalidName = errors.New("streams: invalid name")
	// ErrStoreInUse means another embedded server, in this process or
	// another, holds the JetStream store directory.
	ErrStoreInUse = errors.New("streams: JetStream store in use by another server")
	// ErrInvalidConfig means a configuration struct failed validation.
	ErrInvalidConfig = errors.New("streams: invalid configuration")
	// ErrRejected is the class of every RejectError: the message is bad and
	// must not be retried.
	ErrRejected = errors.New("streams: message rejected")
	// ErrConnect is the class of every ConnectError.
	ErrConnect = errors.New("streams: cannot connect")
	// ErrUnknownSubject means a replay subject is not one of the protocol's.
	ErrUnknownSubject = errors.New("streams: unknown subject")
	// ErrTooLarge means a message exceeds the server's max_payload.
	ErrTooLarge = errors.New("streams: message too large for the server")
)

// NameError says which name is unusable and why.
type NameError struct {
	// Kind is what the name is for: "run", "component", ...
	Kind string
	// Name is the offending value.
	Name string
	// Reason says what is wrong.
	Reason string
}

func (e *NameError) Error() string {
	return fmt.Sprintf("streams: invalid %s name %q: %s", e.Kind, e.Name, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidName) true.
func (e *NameError) Is(target error) bool { return target == ErrInvalidName }

// RejectError marks a message that a handler cannot process and that no
// retry will fix (it does not decode, or fails validation). [Consume] sends
// it to the dead-letter queue with Reason and terminates it on its stream.
type RejectError struct {
	// Reason is the human-readable cause stored in the Rspo-Dlq-Reason header.
	Reason string
	// Err is the underlying error, if any.
	Err error
}

// Reject wraps err as a RejectError whose reason is err's text.
func Reject(err error) error {
	if err == nil {
		err = errors.New("rejected")
	}
	return &RejectError{Reason: err.Error(), Err: err}
}

// Rejectf returns a RejectError with a formatted reason.
func Rejectf(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return &RejectError{Reason: err.Error(), Err: err}
}

func (e *RejectError) Error() string { return "streams: rejected: " + e.Reason }

// Unwrap returns the underlying error.
func (e *RejectError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrRejected) true.
func (e *RejectError) Is(target error) bool { return target == ErrRejected }

// ConnectError says which server could not be reached and, when the cause
// is recognised, what to change.
type ConnectError struct {
	// URL is the server URL that was dialled (credentials removed).
	URL string
	// Hint is an actionable suggestion, possibly empty.
	Hint string
	// Err is the underlying error from the client library.
	Err error
}

func (e *ConnectError) Error() string {
	msg := fmt.Sprintf("streams: connect to %s: %v", e.URL, e.Err)
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

// Unwrap returns the underlying error.
func (e *ConnectError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrConnect) true.
func (e *ConnectError) Is(target error) bool { return target == ErrConnect }
