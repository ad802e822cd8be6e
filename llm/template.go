package llm

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"text/template"
	"unicode/utf8"

	"github.com/rspo-dev/rspo/policy"
)

// The default chat template. A turn t of an episode becomes the system
// message, then for every earlier turn its observation (a user message)
// and the action taken (an assistant message), then the current
// observation with the admissible actions (a user message). The first
// user message also carries the task's instruction.
const (
	DefaultSystem = "You act in a text-based environment to complete a task. Every turn you see an observation " +
		"and the list of admissible actions. Answer with exactly one admissible action, copied verbatim, and nothing else."
	DefaultObservation = "{{if .First}}Task: {{.Instruction}}\n\n{{end}}Observation:\n{{.Observation}}"
	DefaultPrompt      = DefaultObservation + "\n\nAdmissible actions:\n{{range .Admissible}}- {{.}}\n{{end}}\n" + askLine
	askLine            = "Answer with exactly one admissible action."
)

// Template configures how a turn is rendered into chat messages. Each field
// is a Go text/template over TurnData.
type Template struct {
	// System renders the system message. Default DefaultSystem.
	System string `json:"system" yaml:"system"`
	// Observation renders the user message of an earlier turn. Default
	// DefaultObservation.
	Observation string `json:"observation" yaml:"observation"`
	// Prompt renders the current turn's user message, which must list the
	// admissible actions and ask for one. Default DefaultPrompt.
	Prompt string `json:"prompt" yaml:"prompt"`
}

// TurnData is what a template sees.
type TurnData struct {
	// Instruction is the task's goal text.
	Instruction string
	// Observation is the turn's observation.
	Observation string
	// Admissible lists the actions to choose from (Prompt only).
	Admissible []string
	// Step is the turn's index, from 0.
	Step int
	// First is Step == 0.
	First bool
}

// IsDefault reports whether t renders exactly as the default template
// (what `rspo serve policy` parses).
func (t Template) IsDefault() bool { return t.withDefaults() == Template{}.withDefaults() }

func (t Template) withDefaults() Template {
	if t.System == "" {
		t.System = DefaultSystem
	}
	if t.Observation == "" {
		t.Observation = DefaultObservation
	}
	if t.Prompt == "" {
		t.Prompt = DefaultPrompt
	}
	return t
}

// LoadTemplate reads a template file: three sections introduced by lines
// "--- system", "--- observation" and "--- prompt" (each optional; a
// missing one keeps its default), the text up to the next such line (its
// final newline dropped) being the section's template.
func LoadTemplate(path string) (Template, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Template{}, fmt.Errorf("llm: chat template: %w", err)
	}
	var t Template
	var cur *string
	var sb strings.Builder
	flush := func() {
		if cur != nil {
			*cur = strings.TrimSuffix(sb.String(), "\n")
		}
		sb.Reset()
	}
	for i, line := range strings.SplitAfter(string(b), "\n") {
		name, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "--- ")
		if !ok {
			if cur == nil && strings.TrimSpace(line) != "" {
				return Template{}, fmt.Errorf("llm: chat template %s line %d: text before the first \"--- system|observation|prompt\" line", path, i+1)
			}
			sb.WriteString(line)
			continue
		}
		flush()
		switch strings.TrimSpace(name) {
		case "system":
			cur = &t.System
		case "observation":
			cur = &t.Observation
		case "prompt":
			cur = &t.Prompt
		default:
			return Template{}, fmt.Errorf("llm: chat template %s line %d: unknown section %q (want system, observation or prompt)", path, i+1, name)
		}
	}
	flush()
	_, err = NewRenderer(t)
	return t, err
}

// Renderer renders turns with a compiled Template. It is safe for
// concurrent use.
type Renderer struct {
	system, observation, prompt *template.Template
}

// NewRenderer compiles t (empty fields take their defaults) and reports
// every template that does not parse or does not render a sample turn.
func NewRenderer(t Template) (*Renderer, error) {
	t = t.withDefaults()
	var errs []error
	compile := func(name, text string) *template.Template {
		tm, err := template.New(name).Option("missingkey=error").Parse(text)
		if err == nil {
			err = tm.Execute(new(strings.Builder), TurnData{Instruction: "i", Observation: "o", Admissible: []string{"a"}, First: true})
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("llm: chat template %s: %w", name, err))
		}
		return tm
	}
	r := &Renderer{system: compile("system", t.System), observation: compile("observation", t.Observation),
		prompt: compile("prompt", t.Prompt)}
	return r, errors.Join(errs...)
}

// Render returns the messages of state s: the system message, every
// earlier turn (observation, then the action as the assistant's message)
// and the current observation with the admissible actions.
func (r *Renderer) Render(s *policy.State) ([]ChatMessage, error) {
	msgs := make([]ChatMessage, 0, 2+2*len(s.History))
	d := TurnData{Instruction: s.Instruction}
	sys, err := execute(r.system, d)
	if err != nil {
		return nil, err
	}
	msgs = append(msgs, ChatMessage{Role: "system", Content: sys})
	for i, h := range s.History {
		d := TurnData{Instruction: s.Instruction, Observation: h.Observation, Step: i, First: i == 0}
		obs, err := execute(r.observation, d)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, ChatMessage{Role: "user", Content: obs}, ChatMessage{Role: "assistant", Content: h.Action})
	}
	n := len(s.History)
	p, err := execute(r.prompt, TurnData{Instruction: s.Instruction, Observation: s.Observation,
		Admissible: s.Admissible, Step: n, First: n == 0})
	if err != nil {
		return nil, err
	}
	return append(msgs, ChatMessage{Role: "user", Content: p}), nil
}

func execute(t *template.Template, d TurnData) (string, error) {
	var sb strings.Builder
	if err := t.Execute(&sb, d); err != nil {
		return "", fmt.Errorf("llm: render %s: %w", t.Name(), err)
	}
	return sb.String(), nil
}

// ErrNotDefaultTemplate means a conversation is not in the default
// template's form, so it cannot be read back into a state.
var ErrNotDefaultTemplate = errors.New("llm: the conversation is not in rspo's default chat template")

// ParseConversation reads back the state that the default template
// rendered into msgs: the inverse of Render with the default Template.
// The instructions at its start — any number of system or developer
// messages, which OpenAI treats alike — are accepted whatever they say.
// It returns an error wrapping ErrNotDefaultTemplate, saying where, for
// any other conversation.
func ParseConversation(msgs []ChatMessage) (policy.State, error) {
	bad := func(format string, a ...any) (policy.State, error) {
		return policy.State{}, fmt.Errorf("%w: %s", ErrNotDefaultTemplate, fmt.Sprintf(format, a...))
	}
	for len(msgs) > 0 && instructionRole(msgs[0].Role) {
		msgs = msgs[1:]
	}
	if len(msgs)%2 != 1 {
		return bad("want user and assistant messages alternating, ending with a user message; got %d after the system (or developer) messages", len(msgs))
	}
	var s policy.State
	for i := 0; i < len(msgs); i += 2 {
		if msgs[i].Role != "user" || (i+1 < len(msgs) && msgs[i+1].Role != "assistant") {
			return bad("message %d: want a user message followed by an assistant message", i+1)
		}
		text := msgs[i].Content
		if i == 0 {
			rest, ok := strings.CutPrefix(text, "Task: ")
			instr, obs, found := strings.Cut(rest, "\n\nObservation:\n")
			if !ok || !found {
				return bad("the first user message does not read \"Task: …\\n\\nObservation:\\n…\"")
			}
			s.Instruction, text = instr, obs
		} else {
			obs, ok := strings.CutPrefix(text, "Observation:\n")
			if !ok {
				return bad("user message %d does not start with \"Observation:\\n\"", i+1)
			}
			text = obs
		}
		if i+1 < len(msgs) {
			s.History = append(s.History, policy.Turn{Observation: text, Action: msgs[i+1].Content})
			continue
		}
		obs, acts, err := parseAdmissible(text)
		if err != nil {
			return bad("the last user message: %v", err)
		}
		s.Observation, s.Admissible = obs, acts
	}
	return s, nil
}

// instructionRole reports whether a message of role instructs the model
// rather than taking part in the conversation: "system", or "developer",
// OpenAI's name for it since its reasoning models.
func instructionRole(role string) bool { return role == "system" || role == "developer" }

// parseAdmissible splits the current turn's text (after "Observation:\n")
// into the observation and the admissible actions.
func parseAdmissible(text string) (obs string, acts []string, err error) {
	const header = "\n\nAdmissible actions:\n"
	i := strings.LastIndex(text, header)
	if i < 0 {
		return "", nil, errors.New("no \"Admissible actions:\" list")
	}
	list, ok := strings.CutSuffix(text[i+len(header):], "\n"+askLine)
	if !ok {
		return "", nil, fmt.Errorf("the list does not end with %q", askLine)
	}
	for _, line := range strings.SplitAfter(list, "\n") {
		if line == "" {
			break // after the list's last newline
		}
		a, ok := strings.CutPrefix(line, "- ")
		a, nl := strings.CutSuffix(a, "\n")
		if !ok || !nl {
			return "", nil, fmt.Errorf("list line %q does not read \"- action\"", line)
		}
		acts = append(acts, a)
	}
	if len(acts) == 0 {
		return "", nil, errors.New("the admissible list is empty")
	}
	return text[:i], acts, nil
}

// replyTrim are the characters stripped from around a reply.
const (
	replyQuotes   = "\"'`"
	replyTrailing = ".!;:,"
)

// MaxActionBytes bounds the action an unmatched reply becomes: longer
// replies are cut (at a character boundary).
const MaxActionBytes = 1024

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ParseAction maps a model's reply to an action: the reply is trimmed of
// white space, surrounding quotes (" ' `) and trailing punctuation
// (. ! ; : ,), one layer after another; the first admissible action equal
// to the trimmed reply or one of its stripped forms (the least stripped
// first), else the first equal to one ignoring case, is the action with
// its index. Otherwise the trimmed reply itself is the action and the
// index is -1: the environment takes it as an inadmissible action (a
// wasted step it counts), as verl-agent counts invalid actions.
func ParseAction(reply string, admissible []string) (action string, index int) {
	raw := truncate(strings.ToValidUTF8(strings.TrimSpace(reply), "\uFFFD"), MaxActionBytes)
	forms := []string{raw}
	for s := raw; ; {
		t := strings.TrimSpace(strings.TrimRight(s, replyTrailing))
		if len(t) >= 2 && strings.ContainsRune(replyQuotes, rune(t[0])) && t[len(t)-1] == t[0] {
			t = strings.TrimSpace(t[1 : len(t)-1])
		}
		if t == s {
			break
		}
		s = t
		forms = append(forms, s)
	}
	for _, same := range []func(a, b string) bool{func(a, b string) bool { return a == b }, strings.EqualFold} {
		for _, f := range forms {
			for i, a := range admissible {
				if same(a, f) {
					return a, i
				}
			}
		}
	}
	return raw, -1
}
