package llm

import (
	"encoding/json"
	"net/http"
)

// APIError is OpenAI's error object, the body of every error answer
// ({"error": {...}}) of rspo's OpenAI-compatible servers: what the
// official SDKs decode into their error types.
type APIError struct {
	// Message says what went wrong and what to fix.
	Message string `json:"message"`
	// Type is OpenAI's class of the error: invalid_request_error for the
	// client's mistakes, authentication_error, server_error.
	Type string `json:"type"`
	// Param names the request parameter at fault; null when none is.
	Param *string `json:"param"`
	// Code is a machine-readable reason (model_not_found, …); null when
	// there is none.
	Code *string `json:"code"`
}

// NewAPIError returns the error object; an empty param or code is null.
func NewAPIError(typ, code, param, message string) APIError {
	e := APIError{Message: message, Type: typ}
	if code != "" {
		e.Code = &code
	}
	if param != "" {
		e.Param = &param
	}
	return e
}

// WriteAPIError answers with status and e as OpenAI's error body.
func WriteAPIError(w http.ResponseWriter, status int, e APIError) {
	WriteJSON(w, status, struct {
		Error APIError `json:"error"`
	}{e})
}

// WriteJSON answers with status and v as JSON (one line), or with a 500
// error object when v cannot be encoded.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"message":"cannot encode the answer","type":"server_error","param":null,"code":"internal_error"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
