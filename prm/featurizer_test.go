package prm

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

func features(f Featurizer, instruction, observation, action string) []float32 {
	dst := make([]float32, f.Dim())
	for i := range dst {
		dst[i] = 42 // Features must overwrite every entry
	}
	f.Features(instruction, observation, action, dst)
	return dst
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func cosine(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s / (norm(a) * norm(b))
}

func TestHashProjectionProperties(t *testing.T) {
	f := DefaultFeaturizer()
	const instr = "put a clean apple in fridge"
	const obs = "You arrive at countertop 1. On the countertop 1, you see a apple 1 and a knife 2."
	base := features(f, instr, obs, "take apple 1 from countertop 1")
	tests := []struct {
		name           string
		got            []float32
		minCos, maxCos float64
	}{
		{"same input is identical", features(f, instr, obs, "take apple 1 from countertop 1"), 1 - 1e-6, 1 + 1e-6},
		{"case and punctuation are ignored", features(f, strings.ToUpper(instr), obs+"!!", "Take apple 1, from countertop 1"), 1 - 1e-6, 1 + 1e-6},
		{"other action differs", features(f, instr, obs, "take knife 2 from countertop 1"), -1, 0.9},
		{"unrelated step is near orthogonal", features(f, "find a book", "You are in the hallway.", "go to desk 1"), -0.3, 0.3},
	}
	if n := norm(base); n < 0.7 || n > 1.3 {
		t.Errorf("feature norm: got %.3f, want ≈ 1", n)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if c := cosine(base, tt.got); c < tt.minCos || c > tt.maxCos {
				t.Errorf("cosine to the base step: got %.3f, want in [%.2f, %.2f]", c, tt.minCos, tt.maxCos)
			}
		})
	}
}

func TestHashProjectionSeedChangesProjection(t *testing.T) {
	a, _ := NewHashProjection(HashProjectionConfig{Seed: 1})
	b, _ := NewHashProjection(HashProjectionConfig{Seed: 2})
	if c := cosine(features(a, "x", "y", "z"), features(b, "x", "y", "z")); math.Abs(c) > 0.5 {
		t.Errorf("cosine across seeds: got %.3f, want near 0", c)
	}
}

func TestHashProjectionEmptyStep(t *testing.T) {
	v := features(DefaultFeaturizer(), "", "", "")
	if n := norm(v); n != 0 {
		t.Errorf("norm of an empty step: got %v, want 0", n)
	}
}

func TestHashProjectionConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     HashProjectionConfig
		wantErr bool
	}{
		{"defaults", HashProjectionConfig{}, false},
		{"small", HashProjectionConfig{Dim: 8, Nonzeros: 2, NGram: 1}, false},
		{"dim too large", HashProjectionConfig{Dim: MaxFeatureDim + 1}, true},
		{"negative dim", HashProjectionConfig{Dim: -1}, true},
		{"nonzeros above dim", HashProjectionConfig{Dim: 8, Nonzeros: 9}, true},
		{"ngram too long", HashProjectionConfig{NGram: 6}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewHashProjection(tt.cfg)
			if (err != nil) != tt.wantErr || (err != nil && !errors.Is(err, ErrInvalidConfig)) {
				t.Errorf("got error %v, want error %v (wrapping ErrInvalidConfig)", err, tt.wantErr)
			}
		})
	}
}

func TestFeaturizerSpecRoundTrip(t *testing.T) {
	f, _ := NewHashProjection(HashProjectionConfig{Dim: 64, Seed: 9, NGram: 3, Nonzeros: 4})
	g, err := NewFeaturizer(f.Spec())
	if err != nil {
		t.Fatal(err)
	}
	a, b := features(f, "i", "o p q", "a b"), features(g, "i", "o p q", "a b")
	for k := range a {
		if a[k] != b[k] {
			t.Fatalf("rebuilt featurizer differs at %d: got %v, want %v", k, b[k], a[k])
		}
	}
	if _, err := NewFeaturizer(FeaturizerSpec{Name: "llm-embeddings"}); !errors.Is(err, ErrUnknownFeaturizer) {
		t.Errorf("unknown featurizer: got %v, want ErrUnknownFeaturizer", err)
	}
	if _, err := NewFeaturizer(FeaturizerSpec{Name: HashProjectionName, Params: []byte("{")}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("bad params: got %v, want ErrInvalidConfig", err)
	}
}

// TestHashProjectionGolden pins the frozen featurizer: a change here breaks
// every stored PRM snapshot, so it must be deliberate.
func TestHashProjectionGolden(t *testing.T) {
	f, _ := NewHashProjection(HashProjectionConfig{Dim: 16, Seed: 7, Nonzeros: 4})
	steps := [][3]string{
		{"put a hot egg in garbagecan", "You arrive at microwave 1. The microwave 1 is closed.", "open microwave 1"},
		{"find two pens and put them in drawer", "You see nothing.", "go to shelf 3"},
		{"", "", "look"},
	}
	var b strings.Builder
	for _, s := range steps {
		fmt.Fprintf(&b, "%q %q %q\n", s[0], s[1], s[2])
		for _, x := range features(f, s[0], s[1], s[2]) {
			fmt.Fprintf(&b, " %.6f", x)
		}
		b.WriteString("\n")
	}
	golden(t, "hashprojection.golden", []byte(b.String()))
}
