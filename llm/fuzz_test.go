package llm

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rspo-dev/rspo/policy"
)

// FuzzParseChatResponse decodes arbitrary answers and parses every choice
// in every mode: nothing panics, and what parses is what the trajectory
// schema accepts (log-probs finite and ≤ 0, one per id, ids ≥ 0).
func FuzzParseChatResponse(f *testing.F) {
	for _, name := range []string{"chat_response_vllm.json", "chat_response_openai.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var r ChatResponse
		if json.Unmarshal(b, &r) != nil {
			return
		}
		for _, c := range r.Choices {
			for _, mode := range TokenIDModes {
				comp, err := ParseCompletion(c, mode)
				if err != nil {
					continue
				}
				if math.IsNaN(comp.LogProb) || comp.LogProb > 0 {
					t.Fatalf("%s: log-prob %v", mode, comp.LogProb)
				}
				if len(comp.TokenIDs) != len(comp.TokenLogProbs) || (mode != TokenIDNone) != (len(comp.TokenIDs) > 0) {
					t.Fatalf("%s: %d ids, %d log-probs", mode, len(comp.TokenIDs), len(comp.TokenLogProbs))
				}
				for i, id := range comp.TokenIDs {
					if lp := comp.TokenLogProbs[i]; id < 0 || lp > 0 || math.IsInf(float64(lp), 0) {
						t.Fatalf("%s: token %d id %d log-prob %v", mode, i, id, lp)
					}
				}
			}
		}
		// What decodes encodes and decodes to the same value.
		enc, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back ChatResponse
		if err := json.Unmarshal(enc, &back); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if !reflect.DeepEqual(normalise(back), normalise(r)) {
			t.Fatalf("round trip:\n%+v\n%+v", back, r)
		}
	})
}

// normalise maps the forms JSON does not tell apart (nil vs empty) to one.
func normalise(r ChatResponse) ChatResponse {
	b, _ := json.Marshal(r)
	var m any
	_ = json.Unmarshal(b, &m)
	out, _ := json.Marshal(m)
	var n ChatResponse
	_ = json.Unmarshal(out, &n)
	return n
}

// FuzzConversationRoundTrip: a state rendered by the default template
// reads back as itself, whenever its instruction does not contain the
// observation header and its actions are single lines; any other
// conversation reads back or fails, never panics.
func FuzzConversationRoundTrip(f *testing.F) {
	f.Add("put a cool apple in fridge", "You see a fridge 1.", "go to fridge 1", "The fridge is closed.", "open fridge 1", "look")
	f.Add("", "", "", "", "", "")
	f.Add("x\n\nObservation:\ny", "a\n\nAdmissible actions:\n- b", "c\nd", "Observation:\n", "- e", "f")
	f.Fuzz(func(t *testing.T, instr, obs0, act0, obs1, a, b string) {
		s := policy.State{Instruction: instr, Observation: obs1, Admissible: []string{a, b},
			History: []policy.Turn{{Observation: obs0, Action: act0}}}
		msgs := render(t, s)
		got, err := ParseConversation(msgs)
		clean := !strings.Contains(instr, "\n\nObservation:\n") && !strings.Contains(a, "\n") && !strings.Contains(b, "\n")
		if clean && (err != nil || !reflect.DeepEqual(got, s)) {
			t.Fatalf("round trip of %#v: got %#v, %v", s, got, err)
		}
		// Arbitrary text in every message.
		for i := range msgs {
			msgs[i].Content = strings.ReplaceAll(msgs[i].Content, "- ", a)
		}
		_, _ = ParseConversation(msgs)
	})
}

// FuzzParseAction: the action is admissible with its index, or the
// reply itself (valid UTF-8, at most MaxActionBytes) with index −1.
func FuzzParseAction(f *testing.F) {
	f.Add(" \"Open Fridge 1.\" ", "open fridge 1", "look")
	f.Add("`'x'`", "x", "")
	f.Add("\xff\xfe", "a", "b")
	f.Fuzz(func(t *testing.T, reply, a, b string) {
		acts := []string{a, b}
		got, i := ParseAction(reply, acts)
		switch {
		case i >= 0 && acts[i] != got:
			t.Fatalf("index %d is %q, action %q", i, acts[i], got)
		case i < -1 || i > 1:
			t.Fatalf("index %d", i)
		case i == -1 && (!utf8.ValidString(got) || len(got) > MaxActionBytes):
			t.Fatalf("fallback action %q", got)
		}
		if i == -1 {
			for _, x := range acts {
				if x == strings.TrimSpace(reply) {
					t.Fatalf("reply %q is admissible but was not matched", reply)
				}
			}
		}
	})
}
