package learnersvc

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

func TestConfigValidatesEvalShards(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Config)
		want string // "" means valid
	}{
		{name: "default: in-process", mod: func(*Config) {}},
		{name: "as many shards as episodes", mod: func(c *Config) { c.EvalShards = 64 }},
		{name: "more shards than episodes", mod: func(c *Config) { c.EvalShards = 65 }, want: "eval shards 65: an evaluation has 64 episodes (eval episodes), so at most 64 shards"},
		{name: "negative", mod: func(c *Config) { c.EvalShards = -2 }, want: "eval shards -2: want at least 1"},
		{name: "shards over a message's episodes", mod: func(c *Config) { c.EvalShards, c.EvalEpisodes = 2, 5000 },
			want: "shards of 2500 episodes, more than the 2048 a shard holds; use at least 3 shards"},
		{name: "large in-process evaluation", mod: func(c *Config) { c.EvalEpisodes = 5000 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Config{Run: "r1"}
			tt.mod(&c)
			err := c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v, want a valid config", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want an error mentioning %q", err, tt.want)
			}
		})
	}
}

// evalShardsFixture is an evaluation of two splits of 6 episodes in 3
// shards each, and honest answers to its shards.
func evalShardsFixture() ([]schemas.EvalShard, []schemas.EvalResult) {
	var shards []schemas.EvalShard
	for _, split := range []string{"in_distribution", "out_of_distribution"} {
		tasks := make([]schemas.TaskRef, 6)
		for i := range tasks {
			tasks[i] = schemas.TaskRef{ID: fmt.Sprintf("%s/%d", split, i), Type: []string{"pick", "heat", "cool"}[i%3]}
		}
		job := schemas.EvalShard{Run: "r1", Update: 10, PolicyVersion: 10, Split: split, Seed: 5, Env: "household"}
		shards = append(shards, schemas.EvalShardsOf(job, tasks, 3)...)
	}
	for i := range shards {
		shards[i].Nonce = fixtureKey.Eval(streams.EvalShardID(shards[i]))
	}
	results := make([]schemas.EvalResult, len(shards))
	for k, sh := range shards {
		r := schemas.EvalResult{Run: sh.Run, Update: sh.Update, PolicyVersion: sh.PolicyVersion, Split: sh.Split, Shard: sh.Shard,
			Shards: sh.Shards, EpisodeStart: sh.EpisodeStart, EpisodeEnd: sh.EpisodeEnd, Episodes: sh.Episodes, Evaluator: "actor-a",
			Nonce: sh.Nonce}
		for i, task := range sh.Tasks {
			ep := sh.EpisodeStart + i
			r.Results = append(r.Results, schemas.EvalEpisode{Type: task.Type, Success: ep%2 == 0, Score: float64(1 - ep%2), Steps: 3 + ep})
		}
		results[k] = r
	}
	return shards, results
}

// fixtureKey is the evaluation key of the fixture's learner, and
// fixtureLimits its environment's: episodes of at most 10 steps, binary
// outcomes.
var (
	fixtureKey    = NonceKey("0123456789abcdef0123456789abcdef")
	fixtureLimits = evalLimits{maxSteps: 10, binary: true}
)

func msgOf(r schemas.EvalResult) streams.Message { return streams.Message{EvalResult: &r} }

// Hostile but well-formed results are refused, each with its reason, and
// leave the honest results' figures as they are; the first result of a
// shard counts, a second is refused whatever it says.
func TestEvalResultsRefuseHostileAnswers(t *testing.T) {
	shards, honest := evalShardsFixture()
	forged := func(k int, mod func(*schemas.EvalResult)) schemas.EvalResult {
		r := honest[k]
		r.Results = append([]schemas.EvalEpisode(nil), r.Results...)
		r.Evaluator = "mallory"
		mod(&r)
		return r
	}
	hostile := []struct {
		name string
		msg  streams.Message
		want string
	}{
		{"undecodable", streams.Message{Err: fmt.Errorf("schemas: invalid results: 3 results for the shard's 2 episodes")}, "not a valid eval result: schemas: invalid results"},
		{"another run", msgOf(forged(0, func(r *schemas.EvalResult) { r.Run = "r2" })), "invalid run: r2, but the shard's is r1"},
		{"wrong update", msgOf(forged(0, func(r *schemas.EvalResult) { r.Update = 9 })), "invalid update: 9, but the shard's is 10"},
		{"wrong policy version", msgOf(forged(1, func(r *schemas.EvalResult) { r.PolicyVersion = 8 })), "policy_version: 8"},
		{"a split not evaluated", msgOf(forged(1, func(r *schemas.EvalResult) { r.Split = "train" })), `split "train", which this evaluation does not evaluate`},
		{"another shard count", msgOf(forged(0, func(r *schemas.EvalResult) {
			r.Shards, r.Shard, r.EpisodeStart, r.EpisodeEnd = 6, 5, 5, 6
			r.Results = r.Results[:1]
		})), "shard 5 of 6 of split in_distribution: the evaluation has 3 shards"},
		{"forged counts: more episodes than the shard's", msgOf(forged(2, func(r *schemas.EvalResult) {
			r.Shards, r.Shard, r.EpisodeStart, r.EpisodeEnd = 1, 0, 0, 6
			r.Results = append(r.Results, r.Results...)
			r.Results = append(r.Results, r.Results[:2]...)
		})), "invalid shard: 0 of 1, but the shard's is 0 of 3"},
		{"forged task types", msgOf(forged(3, func(r *schemas.EvalResult) { r.Results[0].Type = "pick-forged" })), "results[0].type: pick-forged, but the shard's is pick"},
		// A result that answers its shard in every field but the nonce,
		// published ahead of the actor's, used to count — every episode a
		// success — and the actor's was refused as a second result.
		{"no nonce", msgOf(forged(0, func(r *schemas.EvalResult) { r.Nonce = "" })), "invalid nonce: not the shard's"},
		{"another shard's nonce", msgOf(forged(4, func(r *schemas.EvalResult) { r.Nonce = shards[3].Nonce })), "invalid nonce: not the shard's"},
		{"more steps than an episode takes", msgOf(forged(5, func(r *schemas.EvalResult) { r.Results[1].Steps = 11 })),
			"impossible figures: results[1]: 11 steps, but an episode of the environment ends after 10"},
		{"a success scored 0", msgOf(forged(5, func(r *schemas.EvalResult) { r.Results[0].Success, r.Results[0].Score = true, 0 })),
			"impossible figures: results[0]: success true with score 0"},
	}
	got := newEvalResults(shards, fixtureLimits)
	for _, h := range hostile {
		if reason := got.add(h.msg); !strings.Contains(reason, h.want) {
			t.Errorf("%s: got reason %q, want one naming %q", h.name, reason, h.want)
		}
	}
	if len(got.got) != 0 {
		t.Fatalf("hostile results taken: %v", got.got)
	}
	for k, r := range honest {
		if reason := got.add(msgOf(r)); reason != "" {
			t.Fatalf("honest result %d refused: %s", k, reason)
		}
		if got.complete() != (k == len(honest)-1) {
			t.Errorf("complete after %d of %d results: %v", k+1, len(honest), got.complete())
		}
	}
	for _, dup := range []schemas.EvalResult{honest[4], forged(4, func(r *schemas.EvalResult) {
		r.Results[0].Success, r.Results[0].Score = !r.Results[0].Success, 1-r.Results[0].Score
	})} {
		if reason := got.add(msgOf(dup)); !strings.Contains(reason, "a second eval result of shard 1 of out_of_distribution") {
			t.Errorf("duplicate by %s: got reason %q", dup.Evaluator, reason)
		}
	}
	for _, split := range []string{"in_distribution", "out_of_distribution"} {
		var want []rollout.EpisodeResult
		for _, r := range honest {
			if r.Split == split {
				want = append(want, rollout.EpisodeResults(r.Results)...)
			}
		}
		if eps := got.episodes(split); !reflect.DeepEqual(eps, want) || len(eps) != 6 {
			t.Errorf("%s: merged %v, want the honest results in episode order %v", split, eps, want)
		}
	}
}
