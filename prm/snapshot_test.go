package prm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/rspo-dev/rspo/prm/prmtest"
)

// smallModel is a tiny trained-looking model for snapshot tests.
func smallModel(t testing.TB) *Model {
	t.Helper()
	f, err := NewHashProjection(HashProjectionConfig{Dim: 8, Seed: 3, Nonzeros: 2})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(f, ModelConfig{Hidden: 3, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	m.Version = 7
	m.Info = ModelInfo{Trained: true, Heldout: 20, HeldoutSuccesses: 4, HeldoutAUC: 0.81, HeldoutSpearman: 0.4, HeldoutMSE: 0.12}
	return m
}

func TestSnapshotRoundTrip(t *testing.T) {
	m := smallModel(t)
	b, err := EncodeSnapshot(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != m.Version || got.Info != m.Info || got.Hidden() != m.Hidden() {
		t.Errorf("header: got v%d %+v h%d, want v%d %+v h%d", got.Version, got.Info, got.Hidden(), m.Version, m.Info, m.Hidden())
	}
	trajs, _ := prmtest.Decisive("test", 1, 1, 6)
	a, c := m.ScoreSteps(trajs[0]), got.ScoreSteps(trajs[0])
	for k := range a {
		if a[k] != c[k] {
			t.Errorf("step %d: decoded model scores %v, want %v", k, c[k], a[k])
		}
	}
}

func TestSnapshotFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prm.bin")
	m := smallModel(t)
	if err := SaveFile(path, m); err != nil {
		t.Fatal(err)
	}
	got, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 7 {
		t.Errorf("version: got %d, want 7", got.Version)
	}
	if _, err := LoadFile(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: got %v, want os.ErrNotExist", err)
	}
}

// withChecksum replaces b's trailing checksum with the right one, so a test
// can reach the checks behind it.
func withChecksum(b []byte) []byte {
	b = bytes.Clone(b)
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], castagnoli))
	return b
}

func TestDecodeSnapshotErrors(t *testing.T) {
	good, err := EncodeSnapshot(smallModel(t))
	if err != nil {
		t.Fatal(err)
	}
	mutate := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	hdrLen := int(binary.LittleEndian.Uint32(good[10:]))
	paramsAt := 14 + hdrLen + 4
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrNotSnapshot},
		{"foreign file", []byte("PK\x03\x04 a zip file, not a model"), ErrNotSnapshot},
		{"magic only", []byte(snapshotMagic), ErrCorrupt},
		{"future format", withChecksum(mutate(func(b []byte) []byte { b[8] = 9; return b })), ErrSnapshotVersion},
		{"truncated", good[:len(good)-9], ErrCorrupt},
		{"flipped weight bit", mutate(func(b []byte) []byte { b[paramsAt+3] ^= 0x10; return b }), ErrCorrupt},
		{"header length past end", withChecksum(mutate(func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[10:], uint32(len(b)))
			return b
		})), ErrCorrupt},
		{"header not JSON", withChecksum(mutate(func(b []byte) []byte { b[14] = '!'; return b })), ErrCorrupt},
		{"NaN weight", withChecksum(mutate(func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[paramsAt:], math.Float64bits(math.NaN()))
			return b
		})), ErrCorrupt},
		{"missing weights", withChecksum(append(bytes.Clone(good[:paramsAt+8]), 0, 0, 0, 0)), ErrCorrupt},
		{"unknown featurizer", withChecksum(mutate(func(b []byte) []byte {
			return bytes.Replace(b, []byte(HashProjectionName), []byte("hash-projectiom"), 1)
		})), ErrUnknownFeaturizer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := DecodeSnapshot(tt.b)
			if !errors.Is(err, tt.want) || m != nil {
				t.Errorf("got (%v, %v), want (nil, %v)", m, err, tt.want)
			}
		})
	}
}

type plainFeaturizer struct{}

func (plainFeaturizer) Dim() int                               { return 4 }
func (plainFeaturizer) Features(_, _, _ string, dst []float32) { clear(dst) }

func TestEncodeSnapshotNeedsSpec(t *testing.T) {
	m, err := New(plainFeaturizer{}, ModelConfig{Hidden: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := EncodeSnapshot(m); !errors.Is(err, ErrNotSnapshottable) {
		t.Errorf("got %v, want ErrNotSnapshottable", err)
	}
}

// TestSnapshotFormatGolden keeps format 1 readable: the stored snapshot
// must decode and score as it did when written.
func TestSnapshotFormatGolden(t *testing.T) {
	m := smallModel(t)
	b, err := EncodeSnapshot(m)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "snapshot_v1.prm", b)
	stored, err := os.ReadFile(filepath.Join("testdata", "snapshot_v1.prm"))
	if err != nil {
		t.Fatal(err)
	}
	old, err := DecodeSnapshot(stored)
	if err != nil {
		t.Fatalf("stored format-1 snapshot no longer decodes: %v", err)
	}
	trajs, _ := prmtest.Decisive("test", 1, 1, 3)
	if got, want := fmt.Sprint(old.ScoreSteps(trajs[0])), fmt.Sprint(m.ScoreSteps(trajs[0])); got != want {
		t.Errorf("stored snapshot scores %s, want %s", got, want)
	}
}

// TestWriteFuzzCorpus regenerates the fuzz seed corpus under -update.
func TestWriteFuzzCorpus(t *testing.T) {
	if !*update {
		t.Skip("run with -update to rewrite testdata/fuzz")
	}
	good, err := EncodeSnapshot(smallModel(t))
	if err != nil {
		t.Fatal(err)
	}
	seeds := map[string][]byte{
		"valid":     good,
		"truncated": good[:len(good)/2],
		"foreign":   []byte("not a snapshot at all"),
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzDecodeSnapshot")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range seeds {
		content := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
