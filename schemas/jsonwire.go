package schemas

import (
	"encoding/json"
	"fmt"
)

// validated is a JSON wire message that checks itself.
type validated interface{ Validate() error }

// encodeValidated returns v's JSON wire form after validating it.
func encodeValidated[T validated](v T) ([]byte, error) {
	if err := v.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// decodeValidated parses b as a T and validates it; what names the message
// in the error of bytes that are not JSON.
func decodeValidated[T validated](b []byte, what string) (T, error) {
	var v, zero T
	if err := json.Unmarshal(b, &v); err != nil {
		return zero, &ValidationError{Field: what, Reason: fmt.Sprintf("not valid JSON: %v", err)}
	}
	if err := v.Validate(); err != nil {
		return zero, err
	}
	return v, nil
}
