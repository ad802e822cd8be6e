package policy

import (
	"strings"
	"testing"
)

// TestStopWords checks the stop-word table against the list it is built
// from, over the list itself and the words of a household transcript.
func TestStopWords(t *testing.T) {
	want := map[uint64]bool{}
	for _, w := range stopWords {
		want[hashWord(w)] = true
	}
	s := testState()
	text := strings.Join(append(s.Admissible, s.Instruction, s.Observation, s.History[0].Observation,
		"Nothing happens. You open the drawer 2. In it, you see a pen 1 and a cd 3. Then: aa zz the0 tha"), " ")
	for _, w := range append(strings.Fields(strings.ToLower(text)), stopWords...) {
		h := hashWord(strings.Trim(w, ".,:"))
		if got := isStopWord(h); got != want[h] {
			t.Errorf("%q: got stop word %v, want %v", w, got, want[h])
		}
	}
}
