package llmserve_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/llm/llmserve"
)

// FuzzAPIKeyHeader: whatever Authorization header a request carries, the
// guard lets it through exactly when the header is the Bearer scheme (in
// any case) followed by the key, and otherwise answers 401.
func FuzzAPIKeyHeader(f *testing.F) {
	for _, h := range []string{"Bearer s3cret", "bearer s3cret", "Bearer  s3cret ", "Bearer s3cre", "Basic s3cret", "", "Bearer", "s3cret"} {
		f.Add(h)
	}
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	h, err := llmserve.RequireAPIKey("s3cret", next)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, header string) {
		req := httptest.NewRequest(http.MethodGet, "/v1/models", nil)
		req.Header["Authorization"] = []string{header}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		scheme, token, _ := strings.Cut(header, " ")
		want := strings.EqualFold(scheme, "Bearer") && strings.TrimSpace(token) == "s3cret"
		if passed := rec.Code == http.StatusTeapot; passed != want || !passed && rec.Code != http.StatusUnauthorized {
			t.Fatalf("header %q: status %d, want it let through: %v", header, rec.Code, want)
		}
	})
}
