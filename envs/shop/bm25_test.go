package shop

import (
	"math"
	"slices"
	"testing"
)

// miniCorpus is small enough to score by hand: N = 4, average length 2.5.
var miniCorpus = []string{
	"Red apple",       // 0: length 2
	"green apple pie", // 1: length 3
	"red, RED wine",   // 2: length 3, red twice
	"blue sky",        // 3: length 2
}

func TestBM25ScoresByHand(t *testing.T) {
	ix := newBM25(miniCorpus)
	ln2 := math.Log(2) // idf of a term in 2 of 4 documents: ln(1 + 2.5/2.5)
	tests := []struct {
		name  string
		query string
		doc   int
		want  float64
	}{
		// tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl)) · idf
		{"two terms, short doc", "red apple", 0, 2 * ln2 * 2.2 / (1 + 1.2*(0.25+0.75*2/2.5))},
		{"one term, long doc", "red apple", 1, ln2 * 2.2 / (1 + 1.2*(0.25+0.75*3/2.5))},
		{"repeated term", "red apple", 2, ln2 * 2 * 2.2 / (2 + 1.2*(0.25+0.75*3/2.5))},
		{"no shared term", "red apple", 3, 0},
		{"duplicate query terms count once", "apple apple", 1, ln2 * 2.2 / (1 + 1.2*(0.25+0.75*3/2.5))},
		{"rare term has higher idf", "pie", 1, math.Log(1+3.5/1.5) * 2.2 / (1 + 1.2*(0.25+0.75*3/2.5))},
		{"unknown term", "banana", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ix.score(tt.query, tt.doc); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("score(%q, %d) = %.6f, want %.6f", tt.query, tt.doc, got, tt.want)
			}
		})
	}
}

func TestBM25Ranking(t *testing.T) {
	ix := newBM25(append(slices.Clone(miniCorpus), "red apple")) // 4 duplicates 0
	tests := []struct {
		name  string
		query string
		limit int
		want  []int32
	}{
		{"best first, ties by id", "red apple", 10, []int32{0, 4, 2, 1}},
		{"limit keeps the best", "red apple", 2, []int32{0, 4}},
		{"only matching documents", "sky", 10, []int32{3}},
		{"nothing matches", "banana", 10, []int32{}},
		{"punctuation and case ignored", "RED-apple!", 10, []int32{0, 4, 2, 1}},
		{"zero limit", "red", 0, []int32{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits := ix.search(tt.query, tt.limit)
			got := make([]int32, len(hits))
			for i, h := range hits {
				got[i] = h.doc
				if want := ix.score(tt.query, int(h.doc)); math.Abs(h.score-want) > 1e-12 {
					t.Errorf("hit %d: score %v, want %v", h.doc, h.score, want)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("search(%q, %d) = %v, want %v", tt.query, tt.limit, got, tt.want)
			}
		})
	}
}

// TestBM25ScratchIsReset guards the pooled accumulator: a search must not
// see the scores of the previous one.
func TestBM25ScratchIsReset(t *testing.T) {
	ix := newBM25(miniCorpus)
	first := ix.search("red apple", 10)
	ix.search("blue", 10)
	again := ix.search("red apple", 10)
	if !slices.Equal(first, again) {
		t.Errorf("second search got %v, want %v", again, first)
	}
}

func TestTokenize(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"hyphen and comma", "T-Shirt, 18x18 Inch", []string{"t", "shirt", "18x18", "inch"}},
		{"decimal", "HDMI 2.1 Cable", []string{"hdmi", "2", "1", "cable"}},
		{"empty", "  ", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tokenize(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("tokenize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
