package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/pipeline"
	"github.com/rspo-dev/rspo/producers"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// TestActorKilledMidEvaluationIsRedone runs two `rspo serve actor`
// processes for a learner whose final evaluation is split into 2 shards a
// split, SIGKILLs one while each actor holds a shard, and checks that the
// other plays the killed actor's shard after the ack wait: the run
// finishes with exactly the figures of the same run evaluated in-process
// (`rspo run --eval-shards 1`), and every shard's result is the
// survivor's.
func TestActorKilledMidEvaluationIsRedone(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every stage as a process; skipped with -short")
	}
	c := startEmbeddedStages(t, "ekill")
	actor := func(name string) *proc {
		return newProc(t, c.bin, filepath.Join(c.dir, name+".log"), "serve", "actor", "--nats", c.url, "--run", c.run,
			"--name", name, "--parallel", "1", "--ack-wait", "3s")
	}
	victim, _ := actor("a1"), actor("a2")
	training := []string{"--run", c.run, "--env-opt", "preset=easy", "--rspo=false", "--recipe", "paper",
		"--updates", "2", "--tasks", "4", "--group", "4", "--eval-every", "10", "--eval-episodes", "256"}

	learner := make(chan error, 1)
	var out []byte
	go func() {
		var err error
		args := append(append([]string{"serve", "learner", "--nats", c.url}, training...), "--eval-shards", "2")
		out, err = exec.CommandContext(c.ctx, c.bin, args...).CombinedOutput()
		learner <- err
	}()
	// Each actor pulls one shard at a time: two claimed shards are one each.
	killed := false
	for !killed {
		select {
		case err := <-learner:
			t.Fatalf("the learner ended (%v) before both actors held an evaluation shard\n%s", err, out)
		case <-time.After(10 * time.Millisecond):
		}
		cons, err := c.js.Consumer(c.ctx, streams.StreamWork, producers.EvaluatorDurable(c.run))
		if err != nil {
			continue // not created yet
		}
		if info, err := cons.Info(c.ctx); err == nil && info.NumAckPending == 2 {
			victim.kill()
			killed = true
		}
	}
	if err := <-learner; err != nil {
		t.Fatalf("learner: %v\n%s", err, out)
	}

	final := c.finalFigures()
	by := map[string]int{}
	err := streams.Replay(c.ctx, c.js, streams.ReplayOptions{Run: c.run, Subject: streams.KindEval}, func(m streams.Message) error {
		if m.EvalResult == nil {
			t.Errorf("undecodable eval result: %v", m.Err)
			return nil
		}
		by[m.EvalResult.Evaluator]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if by["a2"] != 4 || len(by) != 1 {
		t.Errorf("eval results by evaluator %v: want all 4 shards (2 splits × 2) by a2, a1's redone", by)
	}

	// The same run, evaluated in-process.
	data := t.TempDir()
	args := append(append([]string{"run", "--data", data}, training...), "--json")
	if out, err := exec.CommandContext(c.ctx, c.bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("rspo run: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(filepath.Join(data, c.run, "report", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum pipeline.Summary
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	if len(final) == 0 || !reflect.DeepEqual(final, sum.Final) {
		t.Errorf("final figures with an actor killed mid-evaluation %v, want the in-process evaluation's %v", final, sum.Final)
	}
}

// finalFigures returns the run.finished event's figures.
func (c *stageCluster) finalFigures() map[string]float64 {
	c.t.Helper()
	var final map[string]float64
	err := streams.Replay(c.ctx, c.js, streams.ReplayOptions{Run: c.run, Subject: streams.CtrlKind(schemas.EventRunFinished)}, func(m streams.Message) error {
		if m.Event != nil {
			final = m.Event.Metrics
		}
		return nil
	})
	if err != nil {
		c.t.Fatal(err)
	}
	return final
}
