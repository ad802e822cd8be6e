package llm

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestEmbedHandlerErrors(t *testing.T) {
	h, err := NewEmbedHandler(EmbedHandlerConfig{Model: "tiny", Embed: tinyEmbed, MaxInputs: 2, MaxBodyBytes: 200})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, method, path, body string
		code                     int
		errCode                  string
	}{
		{"not JSON", "POST", "/v1/embeddings", `{"model":`, 400, ""},
		{"no model", "POST", "/v1/embeddings", `{"input":"x"}`, 400, ""},
		{"no input", "POST", "/v1/embeddings", `{"model":"tiny"}`, 400, ""},
		{"token ids", "POST", "/v1/embeddings", `{"model":"tiny","input":[1,2]}`, 400, ""},
		{"bad format", "POST", "/v1/embeddings", `{"model":"tiny","input":"x","encoding_format":"int8"}`, 400, ""},
		{"dimensions", "POST", "/v1/embeddings", `{"model":"tiny","input":"x","dimensions":2}`, 400, ""},
		{"unknown model", "POST", "/v1/embeddings", `{"model":"big","input":"x"}`, 404, "model_not_found"},
		{"too many inputs", "POST", "/v1/embeddings", `{"model":"tiny","input":["a","b","c"]}`, 413, "too_many_inputs"},
		{"body too large", "POST", "/v1/embeddings", `{"model":"tiny","input":"` + strings.Repeat("x", 300) + `"}`, 413, "request_too_large"},
		{"GET embeddings", "GET", "/v1/embeddings", "", 405, "method_not_allowed"},
		{"POST models", "POST", "/v1/models", "{}", 405, "method_not_allowed"},
		{"unknown path", "GET", "/v1/chat/completions", "", 404, "unknown_url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body)))
			if rec.Code != tt.code {
				t.Errorf("status: got %d, want %d (%s)", rec.Code, tt.code, rec.Body)
			}
			var e struct {
				Error struct {
					Message string  `json:"message"`
					Type    string  `json:"type"`
					Code    *string `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Message == "" || e.Error.Type == "" {
				t.Fatalf("not an OpenAI error object: %s", rec.Body)
			}
			if got := ""; e.Error.Code != nil {
				got = *e.Error.Code
				if got != tt.errCode {
					t.Errorf("code: got %q, want %q", got, tt.errCode)
				}
			} else if tt.errCode != "" {
				t.Errorf("code: got null, want %q", tt.errCode)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("content type %q", ct)
			}
		})
	}
}

func TestEmbedHandlerBase64AndModels(t *testing.T) {
	h, err := NewEmbedHandler(EmbedHandlerConfig{Model: "tiny", Embed: tinyEmbed})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/embeddings", strings.NewReader(`{"model":"tiny","input":"hello","encoding_format":"base64"}`)))
	var resp struct {
		Data []struct {
			Embedding string `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || len(resp.Data) != 1 {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	b, err := base64.StdEncoding.DecodeString(resp.Data[0].Embedding)
	if err != nil {
		t.Fatal(err)
	}
	want := tinyEmbed("hello")
	if len(b) != 4*len(want) {
		t.Fatalf("%d bytes, want %d", len(b), 4*len(want))
	}
	for i, w := range want {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])); got != w {
			t.Errorf("entry %d: got %v, want %v", i, got, w)
		}
	}

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/models", nil))
	var models struct {
		Object string           `json:"object"`
		Data   []EmbedModelCard `json:"data"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &models); err != nil || models.Object != "list" || len(models.Data) != 1 || models.Data[0].ID != "tiny" {
		t.Errorf("models: %v %s", err, rec.Body)
	}
}

func TestEmbedHandlerBadEmbedFunction(t *testing.T) {
	for name, embed := range map[string]func(string) []float32{
		"empty":     func(string) []float32 { return nil },
		"NaN":       func(string) []float32 { return []float32{float32(math.NaN())} },
		"lengths":   func(s string) []float32 { return make([]float32, len(s)+1) },
		"+Inf last": func(string) []float32 { return []float32{1, float32(math.Inf(1))} },
	} {
		t.Run(name, func(t *testing.T) {
			h, err := NewEmbedHandler(EmbedHandlerConfig{Model: "m", Embed: embed})
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/embeddings", strings.NewReader(`{"model":"m","input":["a","bb"]}`)))
			if rec.Code != http.StatusInternalServerError {
				t.Errorf("got %d, want 500: %s", rec.Code, rec.Body)
			}
		})
	}
}

func TestNewEmbedHandlerValidates(t *testing.T) {
	_, err := NewEmbedHandler(EmbedHandlerConfig{MaxInputs: -1})
	if err == nil {
		t.Fatal("an empty config was accepted")
	}
	for _, want := range []string{"Model", "Embed", "MaxInputs"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not name %s: %v", want, err)
		}
	}
}
