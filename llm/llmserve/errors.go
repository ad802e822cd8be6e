package llmserve

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/rspo-dev/rspo/llm"
)

// RequestError is a request the server refuses, with the HTTP status and
// OpenAI error object it answers with. Complete returns one for every
// request it cannot answer.
type RequestError struct {
	// Status is the HTTP status: 400 for a request it cannot read, 401
	// without the API key, 404 for an unknown model or route, 405 for
	// another method, 413 for too large a body.
	Status int
	// API is the error object of the answer's body.
	API llm.APIError
}

func (e *RequestError) Error() string {
	return fmt.Sprintf("llmserve: %d %s", e.Status, e.API.Message)
}

const codeModelNotFound = "model_not_found"

// badParam is a 400 of the client's mistake in param ("" for none).
func badParam(param, code, format string, a ...any) *RequestError {
	return &RequestError{Status: http.StatusBadRequest,
		API: llm.NewAPIError("invalid_request_error", code, param, fmt.Sprintf(format, a...))}
}

// unknownModel is the 404 of a model the server does not serve.
func unknownModel(name string, served []string) *RequestError {
	return &RequestError{Status: http.StatusNotFound, API: llm.NewAPIError("invalid_request_error", codeModelNotFound, "model",
		fmt.Sprintf("the model %q does not exist; served: %v", name, served))}
}

// writeError answers with err's status and error object; an error that is
// not a *RequestError is a 500.
func writeError(w http.ResponseWriter, err error) {
	var re *RequestError
	if !errors.As(err, &re) {
		re = &RequestError{Status: http.StatusInternalServerError, API: llm.NewAPIError("server_error", "internal_error", "", err.Error())}
	}
	if re.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="rspo"`)
	}
	llm.WriteAPIError(w, re.Status, re.API)
}
