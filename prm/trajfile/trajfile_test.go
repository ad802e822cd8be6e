package trajfile

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rspo-dev/rspo/prm/prmtest"
	"github.com/rspo-dev/rspo/schemas"
)

func TestRoundTrip(t *testing.T) {
	trajs, _ := prmtest.Decisive("tf", 1, 7, 3)
	tests := []struct {
		name      string
		chunk     int
		wantPlain bool
	}{
		{"one chunk is a plain batch stream", 10, true},
		{"exact fit", 7, true},
		{"framed chunks", 3, false},
		{"one per chunk", 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Encode(&buf, trajs, tt.chunk); err != nil {
				t.Fatal(err)
			}
			if plain := !bytes.HasPrefix(buf.Bytes(), []byte(magic)); plain != tt.wantPlain {
				t.Errorf("plain form: got %v, want %v", plain, tt.wantPlain)
			}
			got, err := Decode(buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, trajs) {
				t.Errorf("round trip changed the trajectories")
			}
		})
	}
}

func TestReadsPlainEncoderOutput(t *testing.T) {
	trajs, _ := prmtest.Decisive("tf", 2, 4, 2)
	b, err := schemas.EncodeTrajectoryBatch(trajs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
	if err != nil || len(got) != 4 {
		t.Fatalf("got %d trajectories (%v), want 4", len(got), err)
	}
}

func TestFile(t *testing.T) {
	trajs, _ := prmtest.Decisive("tf", 3, DefaultChunk+5, 2)
	path := filepath.Join(t.TempDir(), "t.arrow")
	if err := Write(path, trajs); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil || len(got) != len(trajs) {
		t.Fatalf("got %d trajectories (%v), want %d", len(got), err, len(trajs))
	}
}

func TestDecodeErrors(t *testing.T) {
	trajs, _ := prmtest.Decisive("tf", 4, 4, 2)
	var framed bytes.Buffer
	if err := Encode(&framed, trajs, 2); err != nil {
		t.Fatal(err)
	}
	good := framed.Bytes()
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"garbage", []byte("hello world"), schemas.ErrDecode},
		{"stray bytes", append(bytes.Clone(good), 1, 2, 3), ErrFormat},
		{"chunk longer than file", good[:len(good)-10], ErrFormat},
		{"corrupt chunk", append([]byte(magic), 4, 0, 0, 0, 0, 0, 0, 0, 'a', 'b', 'c', 'd'), schemas.ErrDecode},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Decode(tt.b); !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	trajs, _ := prmtest.Decisive("tf", 5, 3, 2)
	var framed bytes.Buffer
	if err := Encode(&framed, trajs, 1); err != nil {
		f.Fatal(err)
	}
	f.Add(framed.Bytes())
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := Decode(b)
		if err != nil {
			return
		}
		var again bytes.Buffer
		if len(got) == 0 {
			return
		}
		if err := Encode(&again, got, 1); err != nil {
			t.Fatalf("decoded trajectories do not re-encode: %v", err)
		}
		back, err := Decode(again.Bytes())
		if err != nil || !reflect.DeepEqual(back, got) {
			t.Fatalf("round trip of decoded trajectories failed: %v", err)
		}
	})
}

var update = flag.Bool("update", false, "rewrite the fuzz seed corpus under testdata/fuzz")

// TestWriteFuzzCorpus regenerates the fuzz seed corpus under -update.
func TestWriteFuzzCorpus(t *testing.T) {
	if !*update {
		t.Skip("run with -update to rewrite testdata/fuzz")
	}
	trajs, _ := prmtest.Decisive("tf", 6, 2, 2)
	var plain, framed bytes.Buffer
	if err := Encode(&plain, trajs, 2); err != nil {
		t.Fatal(err)
	}
	if err := Encode(&framed, trajs, 1); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzDecode")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"plain": plain.Bytes(), "framed": framed.Bytes(), "magic-only": []byte(magic)} {
		content := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
