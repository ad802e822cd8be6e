package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"testing"
)

// golden compares got with testdata/name, rewriting the file under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run go test -update if the change is intended):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

func indent(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
	return append(out.Bytes(), '\n')
}

// tinyEmbed is an embedding function whose vectors read easily.
func tinyEmbed(text string) []float32 {
	return []float32{float32(len(text)), 0.5, -0.25}
}

// The request Embed sends and the answer EmbedHandler gives, in golden
// files: OpenAI's embeddings API as rspo speaks it.
func TestEmbeddingsWireGolden(t *testing.T) {
	h, err := NewEmbedHandler(EmbedHandlerConfig{Model: "tiny", Embed: tinyEmbed})
	if err != nil {
		t.Fatal(err)
	}
	var reqBody, respBody []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqBody, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(reqBody))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		respBody = rec.Body.Bytes()
		w.WriteHeader(rec.Code)
		_, _ = w.Write(respBody)
	}))
	defer srv.Close()
	ep, err := NewEndpoint(EndpointConfig{URL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	vecs, err := ep.Embed(context.Background(), "tiny", []string{"look around", "take mug 1"})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]float32{tinyEmbed("look around"), tinyEmbed("take mug 1")}; !reflect.DeepEqual(vecs, want) {
		t.Errorf("got %v, want %v", vecs, want)
	}
	golden(t, "embeddings_request.golden.json", indent(t, reqBody))
	golden(t, "embeddings_response.golden.json", indent(t, respBody))
}

// The answer has exactly the fields of OpenAI's published example, and the
// client reads that example.
func TestEmbeddingsMatchOpenAIShape(t *testing.T) {
	published, err := os.ReadFile("testdata/openai_embeddings_response.json")
	if err != nil {
		t.Fatal(err)
	}
	var resp EmbeddingsResponse
	if err := json.Unmarshal(published, &resp); err != nil {
		t.Fatal(err)
	}
	vecs, err := resp.Vectors(1)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{0.0023064255, -0.009327292, -0.0028842222}; !reflect.DeepEqual(vecs[0], want) {
		t.Errorf("got %v, want %v", vecs[0], want)
	}
	ours, err := os.ReadFile("testdata/embeddings_response.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := jsonPaths(t, ours), jsonPaths(t, published); !slices.Equal(got, want) {
		t.Errorf("fields of the handler's answer %v, of OpenAI's %v", got, want)
	}
	req, err := os.ReadFile("testdata/openai_embeddings_request.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := DecodeEmbedRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	if r.Model != "text-embedding-ada-002" || len(r.Input) != 1 || r.EncodingFormat != "float" {
		t.Errorf("decoded OpenAI's example request as %+v", r)
	}
}

// jsonPaths lists the object keys of a JSON document as paths, arrays
// collapsed to [].
func jsonPaths(t *testing.T, b []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				set[prefix+"."+k] = true
				walk(prefix+"."+k, e)
			}
		case []any:
			for _, e := range x {
				walk(prefix+"[]", e)
			}
		}
	}
	walk("", v)
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestVectorsRejectsMalformedAnswers(t *testing.T) {
	emb := func(i int, v ...float32) Embedding { return Embedding{Object: "embedding", Index: i, Embedding: v} }
	tests := []struct {
		name string
		data []Embedding
	}{
		{"too few", []Embedding{emb(0, 1)}},
		{"index twice", []Embedding{emb(0, 1), emb(0, 2)}},
		{"index out of range", []Embedding{emb(0, 1), emb(2, 2)}},
		{"negative index", []Embedding{emb(-1, 1), emb(1, 2)}},
		{"lengths differ", []Embedding{emb(0, 1), emb(1, 1, 2)}},
		{"empty vector", []Embedding{emb(0), emb(1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := EmbeddingsResponse{Data: tt.data}
			if v, err := r.Vectors(2); err == nil {
				t.Errorf("got %v, want an error", v)
			}
		})
	}
	r := EmbeddingsResponse{Data: []Embedding{emb(1, 3, 4), emb(0, 1, 2)}}
	v, err := r.Vectors(2)
	if err != nil || !reflect.DeepEqual(v, [][]float32{{1, 2}, {3, 4}}) {
		t.Errorf("out of order answer: got %v, %v; want the vectors by index", v, err)
	}
}

// FuzzEmbeddingsResponse decodes arbitrary answers: whatever Vectors
// accepts has one vector per input, all of one length, and survives a
// round trip through JSON unchanged.
func FuzzEmbeddingsResponse(f *testing.F) {
	for _, seed := range embeddingsResponseSeeds(f) {
		f.Add(seed, uint8(2))
	}
	f.Fuzz(func(t *testing.T, b []byte, n uint8) {
		var resp EmbeddingsResponse
		if json.Unmarshal(b, &resp) != nil {
			return
		}
		vecs, err := resp.Vectors(int(n % 8))
		if err != nil {
			return
		}
		for _, v := range vecs {
			if len(v) == 0 || len(v) != len(vecs[0]) {
				t.Fatalf("accepted vectors of lengths %d and %d", len(v), len(vecs[0]))
			}
		}
		again, err := json.Marshal(resp)
		if err != nil {
			t.Fatalf("accepted answer does not re-encode: %v", err)
		}
		var back EmbeddingsResponse
		if err := json.Unmarshal(again, &back); err != nil {
			t.Fatal(err)
		}
		vecs2, err := back.Vectors(int(n % 8))
		if err != nil || !reflect.DeepEqual(vecs, vecs2) {
			t.Fatalf("round trip: got %v, %v; want %v", vecs2, err, vecs)
		}
	})
}

// FuzzDecodeEmbedRequest decodes arbitrary request bodies: what it accepts
// re-encodes to a request that decodes to the same.
func FuzzDecodeEmbedRequest(f *testing.F) {
	for _, seed := range embedRequestSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := DecodeEmbedRequest(b)
		if err != nil {
			return
		}
		if req.Model == "" || len(req.Input) == 0 {
			t.Fatalf("accepted a request without model or input: %+v", req)
		}
		again, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeEmbedRequest(again)
		if err != nil || !reflect.DeepEqual(back, req) {
			t.Fatalf("round trip: got %+v, %v; want %+v", back, err, req)
		}
	})
}

func embeddingsResponseSeeds(t testing.TB) [][]byte {
	published, err := os.ReadFile("testdata/openai_embeddings_response.json")
	if err != nil {
		t.Fatal(err)
	}
	return [][]byte{
		published,
		[]byte(`{"object":"list","data":[{"object":"embedding","index":1,"embedding":[3,4]},{"object":"embedding","index":0,"embedding":[1,2]}]}`),
		[]byte(`{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[2]}]}`),
		[]byte(`{"data":[{"index":0,"embedding":[1e39]}]}`),
	}
}

func embedRequestSeeds() [][]byte {
	return [][]byte{
		[]byte(`{"model":"m","input":"one text"}`),
		[]byte(`{"model":"m","input":["a","b"],"encoding_format":"base64"}`),
		[]byte(`{"model":"m","input":[1,2,3]}`),
		[]byte(`{"model":"m","input":[],"dimensions":3}`),
		[]byte(`{"input":"x","encoding_format":"int8"}`),
	}
}

// TestWriteFuzzCorpus regenerates the fuzz seed corpus under -update.
func TestWriteFuzzCorpus(t *testing.T) {
	if !*update {
		t.Skip("run with -update to rewrite testdata/fuzz")
	}
	write := func(fuzz string, i int, content string) {
		dir := filepath.Join("testdata", "fuzz", fuzz)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed%d", i)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i, b := range embeddingsResponseSeeds(t) {
		write("FuzzEmbeddingsResponse", i, fmt.Sprintf("go test fuzz v1\n[]byte(%q)\nbyte(%d)\n", b, 2))
	}
	for i, b := range embedRequestSeeds() {
		write("FuzzDecodeEmbedRequest", i, fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b))
	}
}
