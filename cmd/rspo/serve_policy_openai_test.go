package main

import (
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/spf13/pflag"

	"github.com/rspo-dev/rspo/llm"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// TestServePolicyWithOpenAISDK serves a run's versions with `rspo serve
// policy` behind an API key and uses it with the official OpenAI Go SDK,
// as an agent framework would: it lists the models and retrieves one,
// completes with n = 3 choices and log-probs, streams the same request
// (include_usage) into the same answer, and is refused with 401 without
// the key and 404 for a model the server does not serve.
func TestServePolicyWithOpenAISDK(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	const run, key = "sdk", "k3y-for-the-test"
	for v := range int64(3) {
		announce(t, js, run, v, testPolicy(t, 10+v, v))
	}
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sp := startServePolicy(t, "--nats", s.ClientURL(), "--run", run, "--addr", "127.0.0.1:0", "--model", "latest", "--api-key-file", keyFile)
	sp.waitModel(t, key, "sdk-v2")
	c := openai.NewClient(option.WithBaseURL(sp.url), option.WithAPIKey(key), option.WithMaxRetries(0))
	ctx := testContext(t)

	page, err := c.Models.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range page.Data {
		ids = append(ids, m.ID)
	}
	if want := []string{"latest", "rspo-hash-embedding", "sdk-v0", "sdk-v1", "sdk-v2"}; !slices.Equal(ids, want) {
		t.Errorf("models %v, want %v", ids, want)
	}
	if m, err := c.Models.Get(ctx, "sdk-v1"); err != nil || m.ID != "sdk-v1" || m.OwnedBy != "rspo" {
		t.Errorf("retrieve sdk-v1: %+v, %v", m, err)
	}
	_, err = c.Models.Get(ctx, "sdk-v7")
	if e := sdkError(t, err); e.StatusCode != http.StatusNotFound || e.Code != "model_not_found" {
		t.Errorf("retrieve an unknown model: %d %q", e.StatusCode, e.Code)
	}

	params := openai.ChatCompletionNewParams{Model: "latest", Messages: sdkConversation(t), N: openai.Int(3),
		Seed: openai.Int(5), Logprobs: openai.Bool(true), TopLogprobs: openai.Int(2)}
	whole, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := c.Chat.Completions.NewStreaming(ctx, params)
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		if !acc.AddChunk(stream.Current()) {
			t.Fatalf("the SDK refused a chunk: %s", stream.Current().RawJSON())
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(whole.Choices) != 3 || len(acc.Choices) != 3 || acc.Usage.TotalTokens != whole.Usage.TotalTokens {
		t.Fatalf("%d choices whole, %d streamed; usage %d and %d", len(whole.Choices), len(acc.Choices), whole.Usage.TotalTokens, acc.Usage.TotalTokens)
	}
	for i, w := range whole.Choices {
		g := acc.Choices[i]
		if g.Message.Content != w.Message.Content || len(g.Logprobs.Content) != 1 || len(w.Logprobs.Content) != 1 ||
			g.Logprobs.Content[0].Logprob != w.Logprobs.Content[0].Logprob || w.Logprobs.Content[0].Logprob >= 0 ||
			len(w.Logprobs.Content[0].TopLogprobs) != 2 {
			t.Errorf("choice %d: streamed %q %+v, whole %q %+v", i, g.Message.Content, g.Logprobs.Content, w.Message.Content, w.Logprobs.Content)
		}
	}

	anon := openai.NewClient(option.WithBaseURL(sp.url), option.WithAPIKey("not-the-key"), option.WithMaxRetries(0))
	_, err = anon.Chat.Completions.New(ctx, params)
	if e := sdkError(t, err); e.StatusCode != http.StatusUnauthorized || e.Code != "invalid_api_key" {
		t.Errorf("another key: %d %q", e.StatusCode, e.Code)
	}
	if err := sp.stop(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sp.log.String(), key) {
		t.Errorf("the API key is in the log:\n%s", sp.log.String())
	}
}

// sdkConversation is a household turn in the default template, opened by
// a developer message.
func sdkConversation(t *testing.T) []openai.ChatCompletionMessageParamUnion {
	t.Helper()
	r, err := llm.NewRenderer(llm.Template{})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := r.Render(&policy.State{Instruction: "Your task is to: put a clean mug in cabinet.",
		Observation: "You see a mug 1 and a sink 1.", Admissible: []string{"take mug 1", "go to sink 1", "look"}})
	if err != nil {
		t.Fatal(err)
	}
	out := []openai.ChatCompletionMessageParamUnion{openai.DeveloperMessage(msgs[0].Content)}
	for _, m := range msgs[1:] {
		out = append(out, openai.UserMessage(m.Content))
	}
	return out
}

func sdkError(t *testing.T, err error) *openai.Error {
	t.Helper()
	var e *openai.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v (%T), want an *openai.Error", err, err)
	}
	return e
}

// TestServePolicyListensOnLoopback: unless --addr says otherwise, `rspo
// serve policy` listens on this machine only.
func TestServePolicyListensOnLoopback(t *testing.T) {
	var f servePolicyFlags
	fs := pflag.NewFlagSet("serve policy", pflag.ContinueOnError)
	f.register(fs)
	if err := fs.Parse([]string{"--run", "r1"}); err != nil {
		t.Fatal(err)
	}
	host, _, err := net.SplitHostPort(f.addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		t.Errorf("--addr defaults to %q, want a loopback address", f.addr)
	}
}

// TestServePolicyAPIKeySources: the key comes from --api-key-file, else
// RSPO_POLICY_API_KEY; an empty file or variable is refused rather than
// taken as "no key".
func TestServePolicyAPIKeySources(t *testing.T) {
	dir := t.TempDir()
	full, empty := filepath.Join(dir, "full"), filepath.Join(dir, "empty")
	if err := os.WriteFile(full, []byte("from-file\r\nignored\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, file, env string
		setEnv          bool
		key, problem    string
	}{
		{name: "none"},
		{name: "file", file: full, key: "from-file"},
		{name: "file wins", file: full, env: "from-env", setEnv: true, key: "from-file"},
		{name: "variable", env: "from-env", setEnv: true, key: "from-env"},
		{name: "empty file", file: empty, problem: "--api-key-file"},
		{name: "empty variable", setEnv: true, problem: policyAPIKeyEnv + " is set but empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(policyAPIKeyEnv, tc.env)
			if !tc.setEnv {
				os.Unsetenv(policyAPIKeyEnv)
			}
			var f servePolicyFlags
			fs := pflag.NewFlagSet("serve policy", pflag.ContinueOnError)
			f.register(fs)
			args := []string{"--run", "r1", "--embed-model", "none"}
			if tc.file != "" {
				args = append(args, "--api-key-file", tc.file)
			}
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			err := f.parsed(fs)
			if tc.problem == "" && (err != nil || f.apiKey != tc.key) || tc.problem != "" && (err == nil || !strings.Contains(err.Error(), tc.problem)) {
				t.Errorf("key %q, error %v; want key %q, problem %q", f.apiKey, err, tc.key, tc.problem)
			}
		})
	}
}
