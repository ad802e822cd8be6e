package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/producers"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"

	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// evalRun trains cfg on a server of its own with its evaluations split
// into shards (1: in the learner) and played by actors actors, and returns
// the final figures, every eval metrics event's values by split and
// update, the actors' results stored on the run's eval subjects and the
// reasons of the learner's dead letters. prepare, if set, runs on the
// server before the run.
func evalRun(t *testing.T, cfg Config, shards, actors int, prepare func(jetstream.JetStream)) (final map[string]float64, evals map[string]map[string]float64, answered int, dlq []string) {
	t.Helper()
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	if prepare != nil {
		prepare(js)
	}
	cfg.NATSURL, cfg.DataDir = s.ClientURL(), t.TempDir()
	cfg.Learner.EvalShards, cfg.Actors = shards, actors
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	evals = map[string]map[string]float64{} // "<split>#<i>": the split's i-th evaluation
	seen := map[string]int{}
	err = streams.Replay(context.Background(), js, streams.ReplayOptions{Run: cfg.Learner.Run, Subject: "metrics.learner"},
		func(m streams.Message) error {
			if m.Metrics != nil && m.Metrics.Kind == "eval" {
				split := m.Metrics.Labels["split"]
				evals[fmt.Sprintf("%s#%d", split, seen[split])] = m.Metrics.Values
				seen[split]++
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	err = streams.Replay(context.Background(), js, streams.ReplayOptions{Run: cfg.Learner.Run, Subject: streams.KindEval},
		func(m streams.Message) error {
			if m.EvalResult != nil && m.EvalResult.Evaluator != "mallory" {
				if m.EvalResult.Shards != shards {
					t.Errorf("eval result of shard %d of %d, want of %d", m.EvalResult.Shard, m.EvalResult.Shards, shards)
				}
				answered++
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	err = streams.Replay(context.Background(), js, streams.ReplayOptions{Run: cfg.Learner.Run, Subject: "dlq.learner"}, func(m streams.Message) error {
		dlq = append(dlq, m.Headers.Get(streams.HeaderDLQReason))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sum.Final, evals, answered, dlq
}

// Evaluations split into 2 and 3 shards, played by two actors, give
// exactly the figures — overall and per task type, at every evaluation of
// the run — that the learner's in-process evaluation gives.
func TestShardedEvaluationGivesTheInProcessFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	cfg := smallRun(t, "", false)
	final1, evals1, answered1, _ := evalRun(t, cfg, 1, 1, nil)
	if answered1 != 0 {
		t.Errorf("in-process evaluation: %d eval results on the bus, want none", answered1)
	}
	// 4 updates, eval every 2 and at the end: updates 2 and 4, two splits each.
	if len(evals1) != 4 || len(final1) == 0 {
		t.Fatalf("in-process run: %d eval events %v, final %v; want 4 and figures", len(evals1), evals1, final1)
	}
	for _, shards := range []int{2, 3} {
		t.Run(fmt.Sprintf("%d shards", shards), func(t *testing.T) {
			final, evals, answered, dlq := evalRun(t, cfg, shards, 2, nil)
			if len(dlq) > 0 {
				t.Errorf("dead letters of honest results: %q", dlq)
			}
			if !reflect.DeepEqual(final, final1) {
				t.Errorf("final figures: got %v, want the in-process %v", final, final1)
			}
			if !reflect.DeepEqual(evals, evals1) {
				t.Errorf("eval events:\n got %v\nwant %v", evals, evals1)
			}
			if want := 2 * 2 * shards; answered != want {
				t.Errorf("eval results on the bus: %d, want %d (2 evaluations × 2 splits × %d shards)", answered, want, shards)
			}
		})
	}
}

// Hostile but well-formed evaluation results, stored on the run's eval
// subjects before the actors' own, are dead-lettered with their reasons
// (rspo.<run>.dlq.learner) and do not change the figures: the run ends
// with those of the in-process evaluation.
func TestShardedEvaluationDeadLettersHostileResults(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	cfg := smallRun(t, "", false)
	final1, evals1, _, _ := evalRun(t, cfg, 1, 1, nil)
	// The final evaluation: update 4, policy version 4, 8 episodes of a
	// split in 2 shards of 4.
	place := schemas.EvalResult{Run: "t1", Update: 4, PolicyVersion: 4, Split: envs.SplitEvalIn, Shard: 1, Shards: 2,
		EpisodeStart: 4, EpisodeEnd: 8, Episodes: 8, Evaluator: "mallory"}
	forge := func(mod func(*schemas.EvalResult)) []byte {
		r := place
		for range 4 {
			r.Results = append(r.Results, schemas.EvalEpisode{Type: "pick_and_place", Success: true, Score: 1, Steps: 1})
		}
		mod(&r)
		b, err := json.Marshal(r) // not EncodeEvalResult: some do not validate
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	hostile := []struct {
		name string
		data []byte
		want string
	}{
		{"another run's", forge(func(r *schemas.EvalResult) { r.Run = "t2" }), "invalid run: t2, but the shard's is t1"},
		{"of another update", forge(func(r *schemas.EvalResult) { r.Update = 2 }), "invalid update: 2, but the shard's is 4"},
		{"of another version", forge(func(r *schemas.EvalResult) { r.PolicyVersion = 1 }), "invalid policy_version: 1"},
		{"more episodes than the shard's", forge(func(r *schemas.EvalResult) { r.Results = append(r.Results, r.Results...) }),
			"not a valid eval result: schemas: invalid results: 8 results for the shard's 4 episodes"},
		{"the whole split as one shard", forge(func(r *schemas.EvalResult) {
			r.Shard, r.Shards, r.EpisodeStart = 0, 1, 0
			r.Results = append(r.Results, r.Results...)
		}), "invalid shard: 0 of 1, but the shard's is 0 of 2"},
		{"task types the shard did not give", forge(func(r *schemas.EvalResult) {
			for i := range r.Results {
				r.Results[i].Type = "forged"
			}
		}), "results[0].type: forged"},
		{"not JSON", []byte("{"), "not a valid eval result"},
		{"impossible figures", forge(func(r *schemas.EvalResult) { r.Results[0].Score = 0 }), "success true with score 0"},
		// An exact answer to the shard but for its nonce, every episode a
		// success, published ahead of the actor's: it used to count (the
		// figures read 1.0) and the actor's was dead-lettered as a second
		// result — or, published under the id the actor's result had,
		// dropped as a duplicate of it.
		{"an exact answer without the nonce", forge(func(r *schemas.EvalResult) { exact(t, cfg, r) }), "invalid nonce: not the shard's"},
		{"an exact answer under the actor's id of old", forge(func(r *schemas.EvalResult) {
			r.Shard, r.EpisodeStart, r.EpisodeEnd = 0, 0, 4
			exact(t, cfg, r)
		}), "invalid nonce: not the shard's"},
	}
	prepare := func(js jetstream.JetStream) {
		for i, h := range hostile {
			hdr := nats.Header{}
			hdr.Set(streams.HeaderMsgID, fmt.Sprintf("hostile-%d", i))
			if strings.Contains(h.name, "actor's id") {
				var r schemas.EvalResult
				_ = json.Unmarshal(h.data, &r)
				hdr.Set(streams.HeaderMsgID, streams.EvalResultID(r)) // no nonce: the id every actor's result had
			}
			if _, err := streams.Publish(context.Background(), js, streams.Subjects("t1").Eval(4), h.data, hdr); err != nil {
				t.Fatal(err)
			}
		}
	}
	final, evals, _, reasons := evalRun(t, cfg, 2, 2, prepare)
	if !reflect.DeepEqual(final, final1) || !reflect.DeepEqual(evals, evals1) {
		t.Errorf("figures with hostile results:\n got %v %v\nwant the in-process %v %v", final, evals, final1, evals1)
	}
	if len(reasons) != len(hostile) {
		t.Errorf("dead letters: %d %q, want %d", len(reasons), reasons, len(hostile))
	}
	for _, h := range hostile {
		if !slices.ContainsFunc(reasons, func(r string) bool { return strings.Contains(r, h.want) }) {
			t.Errorf("the result %s: no dead letter naming %q in %q", h.name, h.want, reasons)
		}
	}
}

// exact gives r's episodes the task types the learner's evaluation gives
// them (its sample of the split, as learnersvc draws it), so that r
// answers its shard in every field but the nonce.
func exact(t *testing.T, cfg Config, r *schemas.EvalResult) {
	t.Helper()
	env, err := envs.New(cfg.Learner.Env, cfg.Learner.EnvOptions)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := env.Tasks(r.Split, 0, cfg.Learner.Seed)
	if err != nil {
		t.Fatal(err)
	}
	tasks = rollout.EvalSample(tasks, cfg.Learner.EvalEpisodes, rollout.EpisodeSeed(cfg.Learner.Seed, "eval-sample", r.Split))
	for i := range r.Results {
		r.Results[i].Type = tasks[r.EpisodeStart+i].Type
	}
}

// playOnly is a rollout backend that cannot evaluate (not a
// producers.EvalBackend): an actor with it dead-letters every
// evaluation shard it is given.
type playOnly struct{ producers.Backend }

// A shard the run's actors dead-letter is never answered: the run stops
// with the actor's reason instead of waiting for it forever.
func TestDeadLetteredEvalShardStopsTheRun(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	cfg := smallRun(t, t.TempDir(), false)
	cfg.NATSURL, cfg.Learner.EvalShards = s.ClientURL(), 2
	cfg.Actor.Backend = playOnly{producers.NewPolicyCache(js, cfg.Learner.Run, 4)}
	runStopsWith(t, cfg, "evaluation of update 2", "dead-lettered by the actor", "cannot play evaluations")
}

// runStopsWith runs cfg and wants it stopped, within two minutes, by an
// error that says each of wants.
func runStopsWith(t *testing.T, cfg Config, wants ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := Run(ctx, cfg)
	if err == nil || ctx.Err() != nil {
		t.Fatalf("run: %v (timed out: %v), want it stopped with %q", err, ctx.Err(), wants)
	}
	for _, want := range wants {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q, want %q in it", err, want)
		}
	}
}

// brokenPlayer fails every episode with an error that will not pass, so
// an actor with it dead-letters every rollout request it is given.
type brokenPlayer struct{}

func (brokenPlayer) Player(context.Context, int64) (rollout.Player, error) {
	return brokenPlayer{}, nil
}

func (brokenPlayer) Play(context.Context, envs.Env, rollout.Episode) (*schemas.Trajectory, error) {
	return nil, errors.New("the player's weights are corrupt")
}

// A rollout request the run's actors dead-letter is never answered: the
// run stops at once with the actor's reason, not after RolloutTimeout
// with a guess ("are actors running?"). A full disk that refuses the
// actors' trajectories ends the same way.
func TestDeadLetteredRolloutRequestStopsTheRun(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	cfg := smallRun(t, t.TempDir(), false)
	cfg.Learner.RolloutTimeout = 30 * time.Minute
	cfg.Actor.Backend = brokenPlayer{}
	runStopsWith(t, cfg, "rollout request", "dead-lettered by the actor", "weights are corrupt")
}

// A dead letter of an earlier message under a request's id (queued again
// once the dedupe window had passed, the cause mended) does not stop the
// run: only a dead letter of the message the learner queued this time
// does.
func TestEarlierDeadLetterOfARequestIdIsIgnored(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	hdr := nats.Header{}
	hdr.Set(streams.HeaderMsgID, "actor/RSPO_WORK/999999")
	hdr.Set(streams.HeaderDLQMsgID, "t1/rollout/u0-v0-0") // the first update's request
	hdr.Set(streams.HeaderDLQSeq, "999999")
	hdr.Set(streams.HeaderDLQStream, "RSPO_WORK")
	hdr.Set(streams.HeaderDLQComponent, producers.Component)
	hdr.Set(streams.HeaderDLQReason, "insufficient resources, an hour ago")
	if _, err := streams.Publish(context.Background(), js, streams.Subjects("t1").DLQ(producers.Component), []byte("{}"), hdr); err != nil {
		t.Fatal(err)
	}
	cfg := smallRun(t, t.TempDir(), false)
	cfg.NATSURL = s.ClientURL()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatalf("run stopped by an earlier message's dead letter: %v", err)
	}
}
