package llmserve

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	"github.com/rspo-dev/rspo/llm"
)

// ErrEmptyAPIKey is RequireAPIKey's refusal of an empty key, which would
// let every request through.
var ErrEmptyAPIKey = errors.New("llmserve: the API key is empty")

// RequireAPIKey returns a handler that passes a request on to next only
// when it carries key as OpenAI's clients send it, "Authorization: Bearer
// <key>", and answers every other request 401 with an OpenAI error object
// (invalid_api_key), whatever its path. The key is compared in constant
// time and never written anywhere.
func RequireAPIKey(key string, next http.Handler) (http.Handler, error) {
	if key == "" {
		return nil, ErrEmptyAPIKey
	}
	want := sha256.Sum256([]byte(key))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := bearer(r.Header.Get("Authorization"))
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			msg := "incorrect API key: send the server's key as \"Authorization: Bearer <key>\""
			if !ok {
				msg = "no API key: send the server's key as \"Authorization: Bearer <key>\""
			}
			writeError(w, &RequestError{Status: http.StatusUnauthorized, API: llm.NewAPIError("invalid_request_error", "invalid_api_key", "", msg)})
			return
		}
		next.ServeHTTP(w, r)
	}), nil
}

// bearer reads the token of an Authorization header's Bearer scheme
// (whose name is case-insensitive).
func bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}
