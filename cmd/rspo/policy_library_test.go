package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/llm/llmserve"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/auth"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// servedPolicy is a running `rspo serve policy`: its API's base URL, its
// log, and stop, which ends it and returns its error.
type servedPolicy struct {
	url  string
	log  *syncBuffer
	stop func() error
}

// startServePolicy runs `rspo serve policy` in process with args (after
// "serve policy") and waits for the URL it logs.
func startServePolicy(t *testing.T, args ...string) *servedPolicy {
	t.Helper()
	ctx, cancel := context.WithCancel(testContext(t))
	sp := &servedPolicy{log: &syncBuffer{}}
	root := newRootCmd()
	root.SetOut(io.Discard)
	root.SetErr(sp.log)
	root.SetArgs(append([]string{"serve", "policy"}, args...))
	errc := make(chan error, 1)
	go func() { errc <- root.ExecuteContext(ctx) }()
	var once bool
	var err error
	sp.stop = func() error {
		if !once {
			once = true
			cancel()
			err = <-errc
		}
		return err
	}
	t.Cleanup(func() { _ = sp.stop() })
	re := regexp.MustCompile(`url=(http://\S+/v1)`)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(sp.log.String()); m != nil {
			sp.url = m[1]
			return sp
		}
		select {
		case err := <-errc:
			t.Fatalf("serve policy ended early: %v\n%s", err, sp.log.String())
		default:
		}
	}
	t.Fatalf("serve policy did not report its URL:\n%s", sp.log.String())
	return nil
}

// models lists what the server serves, sending key when it is not "".
func (sp *servedPolicy) models(t *testing.T, key string) []string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, sp.url+"/models", nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var list llmserve.ModelList
	if err := json.NewDecoder(res.Body).Decode(&list); err != nil || res.StatusCode != 200 {
		t.Fatalf("models: %d, %v", res.StatusCode, err)
	}
	names := make([]string, len(list.Data))
	for i, m := range list.Data {
		names[i] = m.ID
	}
	return names
}

// waitModel waits until the server serves name.
func (sp *servedPolicy) waitModel(t *testing.T, key, name string) []string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if names := sp.models(t, key); slices.Contains(names, name) {
			return names
		}
	}
	t.Fatalf("%s never served; log:\n%s", name, sp.log.String())
	return nil
}

// testPolicy is a built-in policy of version v whose weights, and so
// its distributions, depend on seed (a new policy's are uniform).
func testPolicy(t *testing.T, seed, v int64) *policy.Policy {
	t.Helper()
	p, err := policy.New(policy.Config{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	for i := range p.NumParams() {
		p.SetParam(i, p.Param(i)+0.5*rng.NormFloat64())
	}
	p.SetVersion(v)
	return p
}

// storeSnapshot stores p as object, as a learner does.
func storeSnapshot(t *testing.T, js jetstream.JetStream, object string, p *policy.Policy) {
	t.Helper()
	b, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := streams.PutSnapshot(testContext(t), js, streams.BucketPolicy, object, b); err != nil {
		t.Fatal(err)
	}
}

// announce stores p as run's version v and announces it as the learner
// does.
func announce(t *testing.T, js jetstream.JetStream, run string, v int64, p *policy.Policy) {
	t.Helper()
	storeSnapshot(t, js, streams.PolicyObject(run, v), p)
	announceOnly(t, js, run, v)
}

// announceOnly announces version v without storing a snapshot (one the
// learner has since pruned).
func announceOnly(t *testing.T, js jetstream.JetStream, run string, v int64) {
	t.Helper()
	e := schemas.Event{Type: schemas.EventPolicyPublished, Run: run, Time: time.Now().UTC(), PolicyVersion: v, Update: v,
		Object: streams.PolicyObject(run, v), Model: schemas.DefaultModelName(run, v)}
	if _, err := streams.PublishEvent(testContext(t), js, e); err != nil {
		t.Fatal(err)
	}
}

// forge publishes body on run's policy.published subject as is.
func forge(t *testing.T, js jetstream.JetStream, run, body string) {
	t.Helper()
	if _, err := streams.Publish(testContext(t), js, streams.Subjects(run).Ctrl(schemas.EventPolicyPublished), []byte(body), nil); err != nil {
		t.Fatal(err)
	}
}

// TestServePolicyDeadLettersForgedVersions: announcements that cannot be
// the run's own — another run's snapshot, a version the run cannot have
// reached (9e18) or a negative one, another run's event, a snapshot of
// another version, another version's model name — are dead-lettered on
// rspo.<run>.dlq.policy with their reasons and never served; the run's own
// versions are, and the --model alias follows the newest real one.
func TestServePolicyDeadLettersForgedVersions(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	const run = "sp"
	announce(t, js, run, 0, testPolicy(t, 1, 0))
	announce(t, js, run, 1, testPolicy(t, 2, 1))
	storeSnapshot(t, js, streams.PolicyObject("other", 5), testPolicy(t, 9, 5))
	storeSnapshot(t, js, streams.PolicyObject(run, 9000000000000000000), testPolicy(t, 9, 9000000000000000000))
	now := time.Now().UTC().Format(time.RFC3339Nano)
	forged := []struct{ body, reason string }{
		{fmt.Sprintf(`{"type":"policy.published","run":%q,"time":%q,"policy_version":5,"object":"other/v000000000005","model":"evil"}`, run, now),
			`the object "other/v000000000005" is not run "sp"'s`},
		{fmt.Sprintf(`{"type":"policy.published","run":%q,"time":%q,"policy_version":9000000000000000000,"object":"sp/v9000000000000000000"}`, run, now),
			"policy version 9000000000000000000 is impossible"},
		{fmt.Sprintf(`{"type":"policy.published","run":%q,"time":%q,"policy_version":-3}`, run, now),
			"not a policy.published event"},
		{fmt.Sprintf(`{"type":"policy.published","run":"other","time":%q,"policy_version":1,"object":"other/v000000000005","model":"other-v1"}`, now),
			`policy.published event of run "other"`},
		{fmt.Sprintf(`{"type":"policy.published","run":%q,"time":%q,"policy_version":2,"object":"sp/v000000000001","model":"sp-v2"}`, run, now),
			"the snapshot sp/v000000000001 holds policy version 1, the event announces version 2"},
		{fmt.Sprintf(`{"type":"policy.published","run":%q,"time":%q,"policy_version":1,"model":"sp-v0"}`, run, now),
			`the model name "sp-v0" is the name of version 0`},
		{"{not json", "not a policy.published event"},
	}
	for _, f := range forged {
		forge(t, js, run, f.body)
	}
	newest := testPolicy(t, 3, 2)
	announce(t, js, run, 2, newest)

	sp := startServePolicy(t, "--nats", s.ClientURL(), "--run", run, "--addr", "127.0.0.1:0", "--model", "latest", "--embed-model", "none")
	got := sp.waitModel(t, "", "sp-v2")
	if want := []string{"latest", "sp-v0", "sp-v1", "sp-v2"}; !slices.Equal(got, want) {
		t.Errorf("served %v, want %v", got, want)
	}
	if a, b := sp.answer(t, "latest"), sp.answer(t, "sp-v2"); a != b {
		t.Errorf("the alias answers %s, version 2 %s: the alias is not the newest real version", a, b)
	}
	var reasons []string
	err := streams.Replay(testContext(t), js, streams.ReplayOptions{Run: run, Subject: streams.SubjectKind("dlq." + policyDeadLetters)},
		func(m streams.Message) error {
			reasons = append(reasons, m.Headers.Get(streams.HeaderDLQReason))
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(reasons) != len(forged) {
		t.Fatalf("%d dead letters, want %d: %q", len(reasons), len(forged), reasons)
	}
	for i, f := range forged {
		if !strings.Contains(reasons[i], f.reason) {
			t.Errorf("dead letter %d: reason %q, want it to say %q", i, reasons[i], f.reason)
		}
	}
	if err := sp.stop(); err != nil {
		t.Errorf("serve policy: %v", err)
	}
}

// answer is the reply of model to a fixed greedy request, with its
// log-prob.
func (sp *servedPolicy) answer(t *testing.T, model string) string {
	t.Helper()
	body := fmt.Sprintf(`{"model":%q,"temperature":0,"logprobs":true,"messages":[{"role":"user","content":"Task: clean the mug\n\nObservation:\nYou see a mug 1.\n\nAdmissible actions:\n- take mug 1\n- look\n- go to sink 1\n\nAnswer with exactly one admissible action."}]}`, model)
	res, err := http.Post(sp.url+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("%s: %d %s", model, res.StatusCode, b)
	}
	var resp struct {
		Choices []struct {
			Message  struct{ Content string }
			Logprobs struct{ Content []struct{ Logprob float64 } }
		}
	}
	if err := json.Unmarshal(b, &resp); err != nil || len(resp.Choices) != 1 || len(resp.Choices[0].Logprobs.Content) != 1 {
		t.Fatalf("%s: %s (%v)", model, b, err)
	}
	return fmt.Sprintf("%s %.12f", resp.Choices[0].Message.Content, resp.Choices[0].Logprobs.Content[0].Logprob)
}

// TestServePolicyReportsPrunedVersionsOnce: on a run whose learner has
// pruned all but its newest snapshots, the versions whose snapshots are
// gone are reported in one line, not one warning each.
func TestServePolicyReportsPrunedVersionsOnce(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	const run = "pruned"
	for v := range int64(10) {
		if v < 8 {
			announceOnly(t, js, run, v)
		} else {
			announce(t, js, run, v, testPolicy(t, v, v))
		}
	}
	sp := startServePolicy(t, "--nats", s.ClientURL(), "--run", run, "--addr", "127.0.0.1:0", "--embed-model", "none")
	sp.waitModel(t, "", "pruned-v9")
	if err := sp.stop(); err != nil {
		t.Fatal(err)
	}
	log := sp.log.String()
	gone := regexp.MustCompile(`(?m)^.*no longer stored.*$`).FindAllString(log, -1)
	if len(gone) != 1 || !strings.Contains(gone[0], "versions=8") || !strings.Contains(gone[0], "oldest=0") || !strings.Contains(gone[0], "newest=7") {
		t.Errorf("pruned versions reported as %q, want one line of versions 0-7", gone)
	}
	if n := strings.Count(log, "level=WARN"); n != 0 {
		t.Errorf("%d warnings:\n%s", n, log)
	}
}

// TestServePolicyWithItsCredentials: under `rspo auth init`'s per-stage
// users, `rspo serve policy --creds <run>/policy.creds` serves the
// versions the learner announces and dead-letters one the trainer's user
// forges with another run's object.
func TestServePolicyWithItsCredentials(t *testing.T) {
	dir := t.TempDir()
	if err := authInit([]string{"ra"}, dir, io.Discard); err != nil {
		t.Fatal(err)
	}
	url, stopNATS := startServeNATS(t, serveNATSFlags{data: t.TempDir(), host: "127.0.0.1", port: -1,
		auth: serveNATSAuth{config: filepath.Join(dir, auth.ConfigFile)}})
	defer func() {
		if err := stopNATS(); err != nil {
			t.Error(err)
		}
	}()
	connect := func(stage string) jetstream.JetStream {
		nc, js, err := (&natsFlags{url: url, creds: auth.CredsPath(dir, "ra", stage)}).connect(testContext(t), "test-"+stage)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return js
	}
	learner, trainer := connect(auth.Learner), connect(auth.Trainer)
	announce(t, learner, "ra", 0, testPolicy(t, 1, 0))
	forge(t, trainer, "ra", fmt.Sprintf(`{"type":"policy.published","run":"ra","time":%q,"policy_version":1,"object":"rb/v000000000001"}`,
		time.Now().UTC().Format(time.RFC3339Nano)))
	announce(t, learner, "ra", 1, testPolicy(t, 2, 1))
	sp := startServePolicy(t, "--nats", url, "--creds", auth.CredsPath(dir, "ra", auth.Policy), "--run", "ra",
		"--addr", "127.0.0.1:0", "--embed-model", "none")
	if got := sp.waitModel(t, "", "ra-v1"); !slices.Equal(got, []string{"ra-v0", "ra-v1"}) {
		t.Errorf("served %v, want ra-v0 and ra-v1", got)
	}
	var reasons []string
	err := streams.Replay(testContext(t), connect(auth.Admin), streams.ReplayOptions{Run: "ra", Subject: streams.SubjectKind("dlq." + policyDeadLetters)},
		func(m streams.Message) error {
			reasons = append(reasons, m.Headers.Get(streams.HeaderDLQReason))
			return nil
		})
	if err != nil || len(reasons) != 1 || !strings.Contains(reasons[0], `"rb/v000000000001" is not run "ra"'s`) {
		t.Errorf("dead letters %q (%v), want the forged announcement's", reasons, err)
	}
	if err := sp.stop(); err != nil {
		t.Errorf("serve policy: %v", err)
	}
	if log := sp.log.String(); strings.Contains(log, "ermission") || strings.Contains(log, "dead-letter failed") {
		t.Errorf("serve policy was refused something:\n%s", log)
	}
}

// FuzzPolicyAnnouncement: whatever an announcement holds, checking it
// never panics, and one it lets through is a policy.published event of
// the run, naming one of the run's snapshots (or none), a version no
// higher than its stream sequence number, and no other version's default
// model name.
func FuzzPolicyAnnouncement(f *testing.F) {
	f.Add([]byte(`{"type":"policy.published","run":"fz","time":"2026-01-02T03:04:05Z","policy_version":3,"object":"fz/v000000000003","model":"fz-v3"}`), uint64(4))
	f.Add([]byte(`{"type":"policy.published","run":"fz","time":"2026-01-02T03:04:05Z","policy_version":9000000000000000000}`), uint64(7))
	f.Add([]byte(`{"type":"policy.published","run":"fz","time":"2026-01-02T03:04:05Z","policy_version":1,"object":"other/v000000000001","model":"fz-v01"}`), uint64(9))
	f.Add([]byte(`{"type":"cycle.started","run":"fz","time":"2026-01-02T03:04:05Z"}`), uint64(1))
	l := &policyLibrary{run: "fz"}
	f.Fuzz(func(t *testing.T, data []byte, seq uint64) {
		seq = max(seq, 1) // JetStream numbers a stream's messages from 1
		e, reason := l.check(data, seq)
		if reason != "" {
			return
		}
		if e.Run != "fz" || e.Type != schemas.EventPolicyPublished || e.PolicyVersion < 0 || uint64(e.PolicyVersion) > seq ||
			e.Object != "" && !strings.HasPrefix(e.Object, "fz/") {
			t.Fatalf("let through %+v at sequence %d", e, seq)
		}
		if v, ok := defaultModelVersion("fz", e.Model); ok && v != e.PolicyVersion {
			t.Fatalf("let through model %q for version %d", e.Model, e.PolicyVersion)
		}
	})
}
