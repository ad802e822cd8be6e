package prmsvc

import (
	"errors"
	"fmt"
)

// Sentinel errors; a *ServiceError matches one of the first two.
var (
	// ErrBadRequest means the service rejected the request as malformed.
	ErrBadRequest = errors.New("prmsvc: bad request")
	// ErrServer means the service failed to score a well-formed request.
	ErrServer = errors.New("prmsvc: server error")
	// ErrInvalidConfig is the class of configuration errors.
	ErrInvalidConfig = errors.New("prmsvc: invalid config")
	// ErrVersionMismatch means a published snapshot holds another version
	// than its prm.published event announced.
	ErrVersionMismatch = errors.New("prmsvc: snapshot version does not match the event")
)

// Error codes carried in the micro error header.
const (
	CodeBadRequest = "400"
	CodeServer     = "500"
)

// ServiceError is an error reply of the scoring service, as seen by a
// client. It keeps the code so errors.Is works across the bus.
type ServiceError struct {
	// Code is the Nats-Service-Error-Code header ("400", "500").
	Code string
	// Description is the Nats-Service-Error header.
	Description string
}

func (e *ServiceError) Error() string {
	return fmt.Sprintf("prmsvc: service error %s: %s", e.Code, e.Description)
}

// Is matches ErrBadRequest for code 400 and ErrServer for any other code.
func (e *ServiceError) Is(target error) bool {
	if e.Code == CodeBadRequest {
		return target == ErrBadRequest
	}
	return target == ErrServer
}
