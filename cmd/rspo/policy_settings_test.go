package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/rspo-dev/rspo/llm"
	"github.com/rspo-dev/rspo/pipeline"
)

func TestPolicySettingsFlags(t *testing.T) {
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "chat.tmpl")
	if err := os.WriteFile(tmpl, []byte("--- system\nBe brief.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.tmpl")
	if err := os.WriteFile(bad, []byte("--- prompt\n{{.Nope}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string // error substring; "" for success
	}{
		{"default", nil, ""},
		{"unknown kind", []string{"--policy", "vllm"}, `"vllm" for "--policy" flag: want one of builtin, openai`},
		{"builtin with endpoint", []string{"--endpoint", "http://h/v1", "--model", "m"}, "[--endpoint --model]: only with --policy openai"},
		{"openai without endpoint", []string{"--policy", "openai"}, "needs --endpoint"},
		{"zero concurrency", []string{"--policy", "openai", "--endpoint", "http://h/v1", "--llm-concurrency", "0"}, `"0" for "--llm-concurrency" flag: want a count of at least 1`},
		{"zero timeout", []string{"--llm-timeout", "0s"}, `"0s" for "--llm-timeout" flag: want a number above 0`},
		{"negative retries", []string{"--llm-retries", "-1"}, `"-1" for "--llm-retries" flag: want a number from 0 to 100`},
		{"zero max tokens", []string{"--max-tokens", "0"}, `"0" for "--max-tokens" flag: want a count of at least 1`},
		{"bad url", []string{"--policy", "openai", "--endpoint", "h:8000"}, "want http(s)://"},
		{"bad token ids", []string{"--policy", "openai", "--endpoint", "http://h/v1", "--token-ids", "ids"}, `"ids" for "--token-ids" flag: want one of token-id-strings, token-ids-field, none`},
		{"pin without model", []string{"--policy", "openai", "--endpoint", "http://h/v1", "--pin-model"}, "pinned model needs its name"},
		{"bad template", []string{"--policy", "openai", "--endpoint", "http://h/v1", "--chat-template", bad}, "chat-template"},
		{"openai", []string{"--policy", "openai", "--endpoint", "http://h:8000/v1", "--model", "qwen", "--llm-timeout", "5s",
			"--chat-template", tmpl, "--token-ids", "none", "--llm-retries", "0"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := defaultPolicySettings()
			fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
			registerSettings(fs, &ps, stageActor)
			var pc pipeline.PolicyConfig
			err := fs.Parse(tc.args)
			if err == nil {
				pc, err = ps.Config()
			}
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("got %v, want an error containing %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "openai" && (pc.Kind != pipeline.PolicyOpenAI || pc.Model != "qwen" || pc.Endpoint.Timeout != 5*time.Second ||
				pc.Endpoint.Retries != -1 || pc.Chat.TokenIDs != llm.TokenIDNone || pc.Chat.Template.System != "Be brief.") {
				t.Errorf("config %+v", pc)
			}
		})
	}
}
