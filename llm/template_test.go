package llm

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/policy"
)

func render(t testing.TB, s policy.State) []ChatMessage {
	t.Helper()
	r, err := NewRenderer(Template{})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := r.Render(&s)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// TestConversationRoundTrip: the default template's messages read back
// into the state they were rendered from.
func TestConversationRoundTrip(t *testing.T) {
	for _, s := range []policy.State{
		sampleState(),
		{Instruction: "find the key", Observation: "", Admissible: []string{"look"}},
		{Instruction: "x", Observation: "a\n\nAdmissible actions:\n- fake", Admissible: []string{"", "b c"},
			History: []policy.Turn{{Observation: "o1", Action: "a1"}, {Observation: "Observation:\nweird", Action: ""}}},
	} {
		msgs := render(t, s)
		if got, want := len(msgs), 2+2*len(s.History); got != want {
			t.Fatalf("%d messages, want %d", got, want)
		}
		got, err := ParseConversation(msgs)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, s) && !(len(s.History) == 0 && got.History == nil) {
			t.Errorf("round trip:\ngot  %#v\nwant %#v", got, s)
		}
	}
}

// TestConversationInstructions: the conversation's opening instructions
// may be a developer message (OpenAI's name for a system message since its
// reasoning models), several of them, or none; a developer message later
// in the conversation is still refused.
func TestConversationInstructions(t *testing.T) {
	s := sampleState()
	msgs := render(t, s)
	dev := ChatMessage{Role: "developer", Content: "Be brief."}
	for name, conv := range map[string][]ChatMessage{
		"developer":            append([]ChatMessage{dev}, msgs[1:]...),
		"system and developer": append([]ChatMessage{msgs[0], dev}, msgs[1:]...),
		"none":                 msgs[1:],
	} {
		got, err := ParseConversation(conv)
		if err != nil || !reflect.DeepEqual(got, s) {
			t.Errorf("%s: got %#v, %v; want %#v", name, got, err, s)
		}
	}
	late := append(append([]ChatMessage{}, msgs...), dev)
	if _, err := ParseConversation(late); !errors.Is(err, ErrNotDefaultTemplate) {
		t.Errorf("a developer message after the conversation: got %v, want ErrNotDefaultTemplate", err)
	}
}

func TestParseConversationErrors(t *testing.T) {
	good := render(t, sampleState())
	for _, tc := range []struct {
		name string
		msgs []ChatMessage
		want string
	}{
		{"empty", nil, "ending with a user message"},
		{"ends with assistant", good[:3], "ending with a user message"},
		{"no task line", []ChatMessage{{Role: "user", Content: "hello"}}, `"Task: `},
		{"roles swapped", []ChatMessage{good[0], {Role: "assistant", Content: good[1].Content}, {Role: "user", Content: "x"}, good[3]}, "want a user message"},
		{"later message", []ChatMessage{good[0], good[1], good[2], {Role: "user", Content: "The fridge."}}, `start with "Observation`},
		{"no list", []ChatMessage{{Role: "user", Content: "Task: t\n\nObservation:\nroom"}}, "no \"Admissible actions:\" list"},
		{"no ask", []ChatMessage{{Role: "user", Content: "Task: t\n\nObservation:\nroom\n\nAdmissible actions:\n- a\n"}}, "does not end with"},
		{"bad line", []ChatMessage{{Role: "user", Content: "Task: t\n\nObservation:\nroom\n\nAdmissible actions:\n* a\n\n" + askLine}}, `does not read "- action"`},
		{"empty list", []ChatMessage{{Role: "user", Content: "Task: t\n\nObservation:\nroom\n\nAdmissible actions:\n\n" + askLine}}, "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConversation(tc.msgs)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), ErrNotDefaultTemplate.Error()) {
				t.Errorf("got %v, want an ErrNotDefaultTemplate containing %q", err, tc.want)
			}
		})
	}
}

func TestParseAction(t *testing.T) {
	acts := []string{"open fridge 1", "go to countertop 1", "Look"}
	for _, tc := range []struct {
		reply, action string
		index         int
	}{
		{"open fridge 1", "open fridge 1", 0},
		{"  open fridge 1\n", "open fridge 1", 0},
		{`"open fridge 1"`, "open fridge 1", 0},
		{"`go to countertop 1`.", "go to countertop 1", 1},
		{"'open fridge 1.'", "open fridge 1", 0},
		{"Open Fridge 1!", "open fridge 1", 0},
		{"look", "Look", 2},
		{"\"look\";", "Look", 2},
		{"I will open fridge 1", "I will open fridge 1", -1},
		{"", "", -1},
		{"\"", "\"", -1},
		{"bad \xff utf8", "bad \uFFFD utf8", -1},
	} {
		a, i := ParseAction(tc.reply, acts)
		if a != tc.action || i != tc.index {
			t.Errorf("ParseAction(%q) = %q, %d; want %q, %d", tc.reply, a, i, tc.action, tc.index)
		}
	}
	if a, _ := ParseAction(strings.Repeat("é", MaxActionBytes), acts); len(a) > MaxActionBytes || !strings.HasPrefix(a, "é") {
		t.Errorf("a long reply is %d bytes, want at most %d", len(a), MaxActionBytes)
	}
}

func TestLoadTemplate(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tm, err := LoadTemplate(write("ok.tmpl", "--- system\nBe brief.\n--- prompt\n{{.Observation}}\n{{range .Admissible}}* {{.}}\n{{end}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if tm.System != "Be brief." || tm.Observation != "" || tm.Prompt != "{{.Observation}}\n{{range .Admissible}}* {{.}}\n{{end}}" || tm.IsDefault() {
		t.Errorf("loaded %+v", tm)
	}
	msgs, err := mustRenderer(t, tm).Render(&policy.State{Observation: "o", Admissible: []string{"a", "b"}})
	if err != nil || msgs[0].Content != "Be brief." || msgs[1].Content != "o\n* a\n* b\n" {
		t.Errorf("rendered %+v, %v", msgs, err)
	}
	for name, text := range map[string]string{
		"preamble.tmpl": "hello\n--- system\nx\n",
		"section.tmpl":  "--- user\nx\n",
		"broken.tmpl":   "--- prompt\n{{.Observation\n",
		"field.tmpl":    "--- observation\n{{.Reward}}\n",
	} {
		if _, err := LoadTemplate(write(name, text)); err == nil {
			t.Errorf("%s: loaded %q", name, text)
		}
	}
	if _, err := LoadTemplate(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing file loaded")
	}
	if !(Template{}).IsDefault() || !(Template{Prompt: DefaultPrompt}).IsDefault() {
		t.Error("the zero template is the default one")
	}
}

func mustRenderer(t *testing.T, tm Template) *Renderer {
	t.Helper()
	r, err := NewRenderer(tm)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
