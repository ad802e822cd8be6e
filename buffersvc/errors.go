package buffersvc

import (
	"errors"
	"fmt"
)

// Sentinel errors. Errors returned by a remote buffer carry a code (see
// RemoteError) so errors.Is works on the client side too.
var (
	// ErrInvalidEntry means a record cannot be stored (empty id, negative
	// cycle, non-finite reward, ...).
	ErrInvalidEntry = errors.New("buffersvc: invalid entry")
	// ErrInvalidConfig means Options or Config failed validation.
	ErrInvalidConfig = errors.New("buffersvc: invalid configuration")
	// ErrBadRequest means a sample or stats request is malformed.
	ErrBadRequest = errors.New("buffersvc: bad request")
	// ErrClosed means the store has been closed.
	ErrClosed = errors.New("buffersvc: store closed")
	// ErrInternal means the buffer failed to serve a well-formed request.
	ErrInternal = errors.New("buffersvc: internal error")
	// ErrNoResponders means no buffer service listens on the run's subjects.
	ErrNoResponders = errors.New("buffersvc: no buffer service for run")
	// ErrBadReply means a reply could not be decoded or reassembled.
	ErrBadReply = errors.New("buffersvc: malformed reply")
	// ErrBusy means the buffer refused a sample because the client, or
	// too many clients, already have as many requests waiting as it holds.
	ErrBusy = errors.New("buffersvc: too many sample requests waiting")
)

// Error codes carried by error replies (the micro service's error code header).
const (
	codeBadRequest = "400"
	codeInternal   = "500"
	codeBusy       = "503"
)

// codeFor maps an error to the code sent across the bus.
func codeFor(err error) string {
	switch {
	case errors.Is(err, ErrBadRequest):
		return codeBadRequest
	case errors.Is(err, ErrBusy):
		return codeBusy
	}
	return codeInternal
}

// RemoteError is an error reply from a buffer service.
type RemoteError struct {
	// Code is the service's error code ("400", "500").
	Code string
	// Description is the service's error text.
	Description string
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("buffersvc: remote error %s: %s", e.Code, e.Description)
}

// Unwrap maps the code back to the sentinel the server saw.
func (e *RemoteError) Unwrap() error {
	switch e.Code {
	case codeBadRequest:
		return ErrBadRequest
	case codeBusy:
		return ErrBusy
	}
	return ErrInternal
}
