package schemas

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// evalJob returns the fields of an evaluation every shard shares, and n
// tasks of alternating types.
func evalJob(n int) (EvalShard, []TaskRef) {
	tasks := make([]TaskRef, n)
	for i := range tasks {
		tasks[i] = TaskRef{ID: fmt.Sprintf("household/in_distribution/%d", i), Type: []string{"pick", "heat"}[i%2],
			Split: "in_distribution", Seed: int64(1000 + i), Instruction: "put a mug in the sink"}
	}
	return EvalShard{Run: "r1", Update: 30, PolicyVersion: 30, Split: "in_distribution", Seed: -7,
		Greedy: true, Env: "household", EnvOptions: map[string]string{"preset": "medium"}}, tasks
}

// resultOf is a well-formed answer to s.
func resultOf(s EvalShard) EvalResult {
	r := EvalResult{Run: s.Run, Update: s.Update, PolicyVersion: s.PolicyVersion, Split: s.Split, Shard: s.Shard,
		Shards: s.Shards, EpisodeStart: s.EpisodeStart, EpisodeEnd: s.EpisodeEnd, Episodes: s.Episodes, Evaluator: "actor-0"}
	for i, t := range s.Tasks {
		r.Results = append(r.Results, EvalEpisode{Type: t.Type, Success: i%3 == 0, Score: float64(i%3) / 3, Steps: 5 + i%4, Inadmissible: i % 2})
	}
	return r
}

// An evaluation's shards cover its episodes once, in order, sizes within
// one of each other, each with its episodes' tasks, and round-trip.
func TestEvalShardsOfCoverTheEvaluation(t *testing.T) {
	for _, tc := range []struct{ episodes, shards int }{{1, 1}, {5, 1}, {5, 2}, {5, 5}, {64, 3}, {512, 2}, {4096, 7}} {
		t.Run(fmt.Sprintf("%d episodes in %d shards", tc.episodes, tc.shards), func(t *testing.T) {
			job, tasks := evalJob(tc.episodes)
			shards := EvalShardsOf(job, tasks, tc.shards)
			if len(shards) != tc.shards {
				t.Fatalf("got %d shards, want %d", len(shards), tc.shards)
			}
			var covered []TaskRef
			least, most := tc.episodes, 0
			for k, sh := range shards {
				if err := sh.Validate(); err != nil {
					t.Fatalf("shard %d: %v", k, err)
				}
				if sh.Shard != k || sh.EpisodeStart != len(covered) || sh.Episodes != tc.episodes {
					t.Errorf("shard %d: index %d, episodes from %d of %d; want index %d from %d of %d", k, sh.Shard, sh.EpisodeStart, sh.Episodes, k, len(covered), tc.episodes)
				}
				covered = append(covered, sh.Tasks...)
				least, most = min(least, len(sh.Tasks)), max(most, len(sh.Tasks))
				raw, err := EncodeEvalShard(sh)
				if err != nil {
					t.Fatal(err)
				}
				back, err := DecodeEvalShard(raw)
				if err != nil || !reflect.DeepEqual(back, sh) {
					t.Fatalf("shard %d round trip: got %+v, %v", k, back, err)
				}
				if err := resultOf(sh).Answers(sh); err != nil {
					t.Errorf("shard %d: its own result does not answer it: %v", k, err)
				}
			}
			if !reflect.DeepEqual(covered, tasks) || least < 1 || most-least > 1 {
				t.Errorf("shards cover %d of %d tasks in order: %v; sizes %d..%d", len(covered), len(tasks), reflect.DeepEqual(covered, tasks), least, most)
			}
		})
	}
}

func TestEvalShardValidate(t *testing.T) {
	job, tasks := evalJob(10)
	good := EvalShardsOf(job, tasks, 3)[1]
	for _, tc := range []struct {
		name string
		mod  func(*EvalShard)
		want string
	}{
		{"bad run", func(s *EvalShard) { s.Run = "a.b" }, "run"},
		{"negative update", func(s *EvalShard) { s.Update = -1 }, "update/policy_version"},
		{"no episodes", func(s *EvalShard) { s.Episodes = 0 }, "episodes"},
		{"more shards than episodes", func(s *EvalShard) { s.Shards = 11 }, "shards"},
		{"shard out of range", func(s *EvalShard) { s.Shard = 3 }, "shard"},
		{"range not the shard's", func(s *EvalShard) { s.EpisodeStart, s.EpisodeEnd = 0, 3 }, "shard 1 of 3 of 10 episodes is [3, 6)"},
		{"too many episodes a shard", func(s *EvalShard) {
			s.Shards, s.Shard, s.Episodes, s.EpisodeStart, s.EpisodeEnd = 1, 0, MaxEvalShardEpisodes+1, 0, MaxEvalShardEpisodes+1
		}, "at most 2048 a shard"},
		{"no split", func(s *EvalShard) { s.Split = "" }, "split"},
		{"long split", func(s *EvalShard) { s.Split = strings.Repeat("x", MaxEvalNameBytes+1) }, "split"},
		{"no env", func(s *EvalShard) { s.Env = "" }, "env"},
		{"a task missing", func(s *EvalShard) { s.Tasks = s.Tasks[1:] }, "2 tasks for the 3 episodes"},
		{"a task without id", func(s *EvalShard) { s.Tasks = append([]TaskRef{{Type: "pick"}}, s.Tasks[1:]...) }, "tasks[0].id"},
		{"a task without type", func(s *EvalShard) { s.Tasks = append([]TaskRef{{ID: "x"}}, s.Tasks[1:]...) }, "tasks[0].type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := good
			s.Tasks = append([]TaskRef(nil), good.Tasks...)
			tc.mod(&s)
			err := s.Validate()
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an ErrInvalid naming %q", err, tc.want)
			}
			if _, err := EncodeEvalShard(s); err == nil {
				t.Error("an invalid shard encoded")
			}
		})
	}
}

func TestEvalResultValidateAndAnswers(t *testing.T) {
	job, tasks := evalJob(10)
	shard := EvalShardsOf(job, tasks, 3)[1]
	good := resultOf(shard)
	for _, tc := range []struct {
		name    string
		mod     func(*EvalResult)
		invalid bool // Validate refuses it; else only Answers does
		want    string
	}{
		{"another run", func(r *EvalResult) { r.Run = "r2" }, false, "invalid run: r2, but the shard's is r1"},
		{"another update", func(r *EvalResult) { r.Update = 29 }, false, "invalid update: 29"},
		{"another version", func(r *EvalResult) { r.PolicyVersion = 3 }, false, "policy_version"},
		{"another split", func(r *EvalResult) { r.Split = "out_of_distribution" }, false, "split"},
		{"another shard", func(r *EvalResult) {
			r.Shard, r.EpisodeStart, r.EpisodeEnd = 2, 6, 10
			r.Results = append(r.Results, r.Results[0])
		}, false, "shard"},
		{"another task type", func(r *EvalResult) { r.Results[1].Type = "heat-forged" }, false, "results[1].type"},
		{"more results than episodes", func(r *EvalResult) { r.Results = append(r.Results, r.Results[0]) }, true, "4 results for the shard's 3 episodes"},
		{"fewer results than episodes", func(r *EvalResult) { r.Results = r.Results[:2] }, true, "2 results"},
		{"a range beyond the evaluation", func(r *EvalResult) { r.EpisodeEnd = 11 }, true, "episode_start/episode_end"},
		{"no evaluator", func(r *EvalResult) { r.Evaluator = "" }, true, "evaluator"},
		{"negative steps", func(r *EvalResult) { r.Results[0].Steps = -1 }, true, "results[0].steps"},
		{"more inadmissible than steps", func(r *EvalResult) { r.Results[2].Inadmissible = 99 }, true, "results[2].inadmissible"},
		{"no type", func(r *EvalResult) { r.Results[0].Type = "" }, true, "results[0].type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := good
			r.Results = append([]EvalEpisode(nil), good.Results...)
			tc.mod(&r)
			err := r.Validate()
			if tc.invalid {
				if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("Validate: got %v, want an ErrInvalid naming %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if err := r.Answers(shard); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Answers: got %v, want an error naming %q", err, tc.want)
			}
		})
	}
	raw, err := EncodeEvalResult(good)
	if err != nil {
		t.Fatal(err)
	}
	if back, err := DecodeEvalResult(raw); err != nil || !reflect.DeepEqual(back, good) {
		t.Errorf("round trip: got %+v, %v", back, err)
	}
	if _, err := DecodeEvalResult([]byte(`{"run":"r1","score":NaN}`)); err == nil {
		t.Error("decoded invalid JSON")
	}
}
