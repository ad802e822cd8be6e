package policy

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestMatchFlags(t *testing.T) {
	p := newTestPolicy(t, Config{})
	s := testState()
	s.History = append(s.History, Turn{Observation: "Nothing happens.", Action: "look"})
	s.Admissible = append(s.Admissible, "look", "clean apple 1 with sinkbasin 1", "go to drawer 3")
	f, err := p.NewFeaturizer().Features(s)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		action string
		flag   int
		want   float64
	}{
		{"take apple 1 from countertop 1", flagGoalEntity, 1},
		{"take bread 2 from countertop 1", flagGoalEntity, 0},
		{"take apple 1 from countertop 1", flagAnyGoal, 1},
		{"take bread 2 from countertop 1", flagAnyGoal, 0},
		{"go to fridge 1", flagGoalFrac, 0.5},
		{"go to sinkbasin 1", flagVisited, 1},
		{"go to fridge 1", flagVisited, 0},
		{"take bread 2 from countertop 1", flagInObs, 1},
		{"go to fridge 1", flagInObs, 0},
		{"take knife 1 from countertop 1", flagSeenWithGoal, 1},
		{"go to sinkbasin 1", flagSeenWithGoal, 1}, // listed beside "fridge 1" in the first observation
		{"go to drawer 3", flagSeenWithGoal, 0},
		{"look", flagRepeatPrev, 1},
		{"inventory", flagRepeatPrev, 0},
		{"look", flagSameVerb, 1},
		{"clean apple 1 with sinkbasin 1", flagVerbInGoal, 1},
		{"go to fridge 1", flagVerbInGoal, 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d", tt.action, tt.flag), func(t *testing.T) {
			a := indexOf(s.Admissible, tt.action)
			if got := f.Flags(a)[tt.flag]; got != tt.want {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestGoalFracCountsTheInstructionsNumbers: when the instruction names
// quantities, an action's numbers are part of what it names, so the size
// asked for matches fully and its neighbours only in their unit; "go to
// fridge 1" above (an instruction without numbers) keeps 0.5.
func TestGoalFracCountsTheInstructionsNumbers(t *testing.T) {
	p := newTestPolicy(t, Config{})
	s := &State{
		Instruction: "i need a face moisturizer in 2.5 oz, as a gel, and price lower than 25.00 dollars",
		Observation: "size: [button] 1.7 oz [button_] [button] 2.5 oz [button_]\nformula: [button] gel [button_] [button] day cream [button_]",
		Admissible:  []string{"click[1.7 oz]", "click[2.5 oz]", "click[gel]", "click[day cream]"},
	}
	f, err := p.NewFeaturizer().Features(s)
	if err != nil {
		t.Fatal(err)
	}
	for a, want := range []float64{1.0 / 4, 3.0 / 4, 1.0 / 2, 0} { // "click" is a word of each
		if got := f.Flags(a)[flagGoalFrac]; math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: goal fraction %v, want %v", s.Admissible[a], got, want)
		}
	}
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	panic("missing " + s)
}

// TestEpisodeMatchesFeatures checks that incremental featurisation of an
// episode gives exactly what featurising each state from scratch gives.
func TestEpisodeMatchesFeatures(t *testing.T) {
	p := newTestPolicy(t, Config{History: 2})
	full := testState()
	turns := append(full.History, Turn{Observation: full.Observation, Action: "take apple 1 from countertop 1"})
	var states []State
	for k := range turns {
		states = append(states, State{Instruction: full.Instruction, Observation: turns[k].Observation, History: turns[:k], Admissible: full.Admissible})
	}
	inc, err := p.NewFeaturizer().Episode(states)
	if err != nil {
		t.Fatal(err)
	}
	for k := range states {
		one, _ := p.NewFeaturizer().Features(&states[k])
		if got, want := fmt.Sprint(*inc[k]), fmt.Sprint(*one); got != want {
			t.Fatalf("state %d: incremental %s, want %s", k, got, want)
		}
	}
}

// TestFeaturesGolden pins the feature extraction: a change to it must bump
// featureVersion (snapshots record it) and regenerate the golden file.
func TestFeaturesGolden(t *testing.T) {
	p := newTestPolicy(t, Config{Buckets: 4096})
	f, err := p.NewFeaturizer().Features(testState())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "feature version %d\nstate %v\n", featureVersion, f.state)
	for a, text := range testState().Admissible {
		fmt.Fprintf(&buf, "%q ids %v flags %.3f\n", text, f.actIDs[f.actOff[a]:f.actOff[a+1]], f.Flags(a))
	}
	path := filepath.Join("testdata", "features.golden")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("features differ from %s (%v):\n%s\nif intended, bump featureVersion and run with -update", path, err, buf.String())
	}
}

func TestContextFlag(t *testing.T) {
	p := newTestPolicy(t, Config{})
	s := &State{
		Instruction: "i need individually wrapped tea bags",
		Observation: "[button] Back to Search [button_]\n[button] B0AAA [button_] Larkin Evening Tea, Individually Wrapped [SEP] $31\n[button] B0BBB [button_] Juniper Morning Coffee [SEP] $25\n",
		Admissible:  []string{"click[back to search]", "click[b0aaa]", "click[b0bbb]"},
	}
	f, err := p.NewFeaturizer().Features(s)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0, 0.6, 0} // goal words: need, individually, wrapped, tea, bags
	for a, w := range want {
		if got := f.Flags(a)[flagContextGoal]; got != w {
			t.Errorf("%s: got context goal fraction %v, want %v", s.Admissible[a], got, w)
		}
	}
}

func TestStateSimilarity(t *testing.T) {
	p := newTestPolicy(t, Config{})
	z := p.NewFeaturizer()
	a, _ := z.Features(testState())
	other := testState()
	other.Observation = "You arrive at fridge 1. The fridge 1 is closed."
	b, _ := z.Features(other)
	if got := StateSimilarity(a, a); got != 1 {
		t.Errorf("self: got %v, want 1", got)
	}
	if got := StateSimilarity(a, b); !(got > 0 && got < 1) {
		t.Errorf("different observation: got %v, want in (0, 1)", got)
	}
	if StateSimilarity(a, b) != StateSimilarity(b, a) {
		t.Error("not symmetric")
	}
}

// TestFeaturizerReuse checks that a featurizer that has seen other
// episodes, of the same task and of another, gives what a fresh one gives.
func TestFeaturizerReuse(t *testing.T) {
	p := newTestPolicy(t, Config{History: 2})
	episode := func(instr string, actions ...string) []State {
		s := testState()
		var states []State
		var hist []Turn
		for i, a := range actions {
			states = append(states, State{Instruction: instr, Observation: fmt.Sprintf("You arrive at place %d. You see a apple 1.", i), History: hist, Admissible: s.Admissible})
			hist = append(hist[:len(hist):len(hist)], Turn{Observation: states[i].Observation, Action: a})
		}
		return states
	}
	instr := testState().Instruction
	a := episode(instr, "take apple 1 from countertop 1", "go to fridge 1", "inventory")
	b := episode(instr, "look", "go to sinkbasin 1", "take knife 1 from countertop 1")
	c := episode("put some bread on the table.", "look", "go to fridge 1")
	z := p.NewFeaturizer()
	for _, ep := range [][]State{a, b, c, b, a} {
		got, err := z.Episode(ep)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := p.NewFeaturizer().Episode(ep)
		for k := range ep {
			if g, w := fmt.Sprint(*got[k]), fmt.Sprint(*want[k]); g != w {
				t.Fatalf("%q step %d: reused featurizer %s, fresh %s", ep[0].Instruction, k, g, w)
			}
		}
	}
}
