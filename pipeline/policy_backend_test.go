package pipeline

import (
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/llm"
	"github.com/rspo-dev/rspo/schemas"
)

func TestPolicyConfigValidate(t *testing.T) {
	ep := llm.EndpointConfig{URL: "http://127.0.0.1:8000/v1"}
	for _, tc := range []struct {
		name string
		c    PolicyConfig
		want string
	}{
		{"zero is builtin", PolicyConfig{}, ""},
		{"builtin", PolicyConfig{Kind: PolicyBuiltin}, ""},
		{"openai", PolicyConfig{Kind: PolicyOpenAI, Endpoint: ep}, ""},
		{"pinned", PolicyConfig{Kind: PolicyOpenAI, Endpoint: ep, Model: "m", PinModel: true}, ""},
		{"unknown", PolicyConfig{Kind: "tgi"}, `policy "tgi"`},
		{"builtin with endpoint", PolicyConfig{Endpoint: ep}, "built-in policy plays in-process"},
		{"openai without url", PolicyConfig{Kind: PolicyOpenAI}, "endpoint URL is empty"},
		{"pin without model", PolicyConfig{Kind: PolicyOpenAI, Endpoint: ep, PinModel: true}, "needs its name"},
		{"bad chat", PolicyConfig{Kind: PolicyOpenAI, Endpoint: ep, Chat: llm.ChatConfig{MaxTokens: -2}}, "max tokens -2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestServedExplorerModes(t *testing.T) {
	served := PolicyConfig{Kind: PolicyOpenAI, Endpoint: llm.EndpointConfig{URL: "http://127.0.0.1:8000/v1"}}
	for _, tc := range []struct {
		name string
		c    Config
		ok   bool
	}{
		{"builtin trains", Config{Learner: learnersvc.Config{RSPO: true}}, true},
		{"served, trained explorer", Config{Policy: served, Learner: learnersvc.Config{RSPO: true}}, false},
		{"served, random-prm control", Config{Policy: served, Learner: learnersvc.Config{RSPO: true, Explore: schemas.ExploreSettings{Mode: schemas.ExplorerRandomPRM}}}, false},
		{"served, tilted", Config{Policy: served, Learner: learnersvc.Config{RSPO: true, Explore: schemas.ExploreSettings{Tilt: 2}}}, true},
		{"served, frozen", Config{Policy: served, Learner: learnersvc.Config{RSPO: true, Explore: schemas.ExploreSettings{Mode: schemas.ExplorerFrozen}}}, true},
		{"served, no RSPO", Config{Policy: served}, true},
	} {
		if err := tc.c.servedExplorer(); (err == nil) != tc.ok {
			t.Errorf("%s: got %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}
