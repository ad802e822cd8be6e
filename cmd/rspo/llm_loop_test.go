package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/llm"
	"github.com/rspo-dev/rspo/pipeline"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// TestLLMLoopTrainsAsTheInProcessRun is the LLM seam end to end, every
// party a process of its own: `rspo serve policy` serves each version over
// the chat-completions protocol, actors play through it (--policy openai),
// the learner publishes each update's batch (--trainer external) and has
// its evaluations played by the actors through the server in 2 shards
// (--eval-shards 2), and `rspo serve trainer` trains and announces every
// version. The policy this loop trains must be the one an in-process
// `rspo run` with the same settings trains, byte for byte, and its final
// figures that run's: the protocol carries everything an update and an
// evaluation need and loses nothing.
func TestLLMLoopTrainsAsTheInProcessRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the stages as processes; skipped with -short")
	}
	bin := buildRSPO(t)
	e, js, ctx := testBus(t, "llm-loop-test", 5*time.Minute)
	const run, updates = "llmloop", 4
	settings := []string{"--env-opt", "preset=easy", "--updates", strconv.Itoa(updates), "--tasks", "4", "--group", "4",
		"--rspo=false", "--recipe", "paper", "--seed", "3", "--eval-every", "2", "--eval-episodes", "8"}
	dir := t.TempDir()
	polLog := filepath.Join(dir, "policy.log")
	server := newProc(t, bin, polLog, "serve", "policy", "--nats", e.ClientURL(), "--run", run, "--addr", "127.0.0.1:0")
	url := waitForLog(t, polLog, regexp.MustCompile(`url=(http://\S+/v1)`))
	trainerLog := filepath.Join(dir, "trainer.log")
	newProc(t, bin, trainerLog, "serve", "trainer", "--nats", e.ClientURL(), "--run", run)
	newProc(t, bin, filepath.Join(dir, "actor.log"), "serve", "actor", "--nats", e.ClientURL(), "--run", run,
		"--parallel", "4", "--policy", "openai", "--endpoint", url)
	learner := append([]string{"serve", "learner", "--nats", e.ClientURL(), "--run", run,
		"--trainer", "external", "--policy", "openai", "--endpoint", url, "--eval-shards", "2"}, settings...)
	if out, err := exec.CommandContext(ctx, bin, learner...).CombinedOutput(); err != nil {
		b, _ := os.ReadFile(trainerLog)
		t.Fatalf("learner: %v\n%s\ntrainer log:\n%s", err, out, b)
	}
	cp, ok, err := learnersvc.LoadCheckpoint(ctx, js, run)
	if err != nil || !ok || !cp.Finished || cp.Version != updates {
		t.Fatalf("checkpoint: %+v (found %v, err %v), want finished at version %d", cp, ok, err, updates)
	}

	// Every version after 0 came from the trainer, named for the server.
	err = streams.Replay(ctx, js, streams.ReplayOptions{Run: run, Subject: streams.CtrlKind(schemas.EventPolicyPublished)},
		func(m streams.Message) error {
			v := m.Event.PolicyVersion
			if _, byTrainer := schemas.BatchAppliedOf(*m.Event); v > 0 && !byTrainer {
				t.Errorf("version %d was not published by the trainer", v)
			}
			if m.Event.Model != schemas.DefaultModelName(run, v) {
				t.Errorf("version %d announced as model %q", v, m.Event.Model)
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	// The evaluations were played by the actor through the server, in
	// shards: 2 evaluations × 2 splits × 2 shards.
	results := 0
	err = streams.Replay(ctx, js, streams.ReplayOptions{Run: run, Subject: streams.KindEval}, func(m streams.Message) error {
		if m.EvalResult != nil && m.EvalResult.Shards == 2 {
			results++
		}
		return nil
	})
	if err != nil || results != 8 {
		t.Errorf("evaluation results on the bus: %d (%v), want 8", results, err)
	}
	// The same server serves embeddings, for a PRM on the embeddings featurizer.
	ep, err := llm.NewEndpoint(llm.EndpointConfig{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	if vecs, err := ep.Embed(ctx, "rspo-hash-embedding", []string{"Task: put a mug in the sink"}); err != nil || len(vecs) != 1 || len(vecs[0]) != 256 {
		t.Errorf("embeddings from serve policy: %d vectors (err %v), want 1 of length 256", len(vecs), err)
	}
	if err := server.stop(); err != nil {
		t.Fatalf("policy server: %v", err)
	}
	answered := waitForLog(t, polLog, regexp.MustCompile(`answered="map\[([^\]]*)\]"`))
	for v := 0; v < updates; v++ { // version `updates` is only evaluated at the end when eval-every divides it
		if !regexp.MustCompile(regexp.QuoteMeta(schemas.DefaultModelName(run, int64(v))) + `:[1-9]`).MatchString(answered) {
			t.Errorf("the server answered no request for version %d: %s", v, answered)
		}
	}

	// The same settings in one process, with the built-in agent and trainer.
	data := t.TempDir()
	ref := append([]string{"run", "--run", "reference", "--data", data}, settings...)
	if out, err := exec.CommandContext(ctx, bin, ref...).CombinedOutput(); err != nil {
		t.Fatalf("in-process run: %v\n%s", err, out)
	}
	want, err := os.ReadFile(filepath.Join(data, "reference", "report", "policy.rspo"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := streams.GetSnapshot(ctx, js, streams.BucketPolicy, streams.PolicyObject(run, updates))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the policy trained through the servers (%d bytes) differs from the in-process run's (%d bytes)", len(got), len(want))
	}
	raw, err := os.ReadFile(filepath.Join(data, "reference", "report", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum pipeline.Summary
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	c := &stageCluster{t: t, run: run, js: js, ctx: ctx}
	if final := c.finalFigures(); len(final) == 0 || !reflect.DeepEqual(final, sum.Final) {
		t.Errorf("final figures played through the server in shards %v, want the in-process run's %v", final, sum.Final)
	}
}
