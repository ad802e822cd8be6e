package schemas

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzDecodeEvalShard decodes arbitrary evaluation work items: a shard
// that is accepted validates and survives an encode/decode round trip.
func FuzzDecodeEvalShard(f *testing.F) {
	job, tasks := evalJob(5)
	good, _ := json.Marshal(EvalShardsOf(job, tasks, 2)[1])
	for _, seed := range [][]byte{good, []byte(`{}`), []byte(`{"run":"r","split":"s","env":"e","shards":1,"episodes":1,"episode_end":1,"tasks":[{"id":"t","type":"x"}]}`),
		[]byte(`{"run":"r","split":"s","env":"e","shards":2,"shard":1,"episodes":2,"episode_start":0,"episode_end":2,"tasks":[]}`), []byte(`[`)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeEvalShard(b)
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("accepted shard does not validate: %v", err)
		}
		raw, err := EncodeEvalShard(s)
		if err != nil {
			t.Fatalf("accepted shard does not encode: %v", err)
		}
		again, err := DecodeEvalShard(raw)
		if err != nil || !reflect.DeepEqual(again, s) {
			t.Fatalf("round trip: got %+v, %v; want %+v", again, err, s)
		}
	})
}

// FuzzDecodeEvalResult decodes arbitrary evaluation results: a result
// that is accepted validates, survives a round trip, and counts no more
// episodes than its range.
func FuzzDecodeEvalResult(f *testing.F) {
	job, tasks := evalJob(5)
	good, _ := json.Marshal(resultOf(EvalShardsOf(job, tasks, 2)[0]))
	for _, seed := range [][]byte{good, []byte(`{}`),
		[]byte(`{"run":"r","split":"s","evaluator":"a","shards":1,"episodes":1,"episode_end":1,"results":[{"type":"x","steps":3,"inadmissible":4}]}`),
		[]byte(`{"run":"r","split":"s","evaluator":"a","shards":1,"episodes":1,"episode_end":1,"results":[{"type":"x"},{"type":"x"}]}`),
		[]byte(`{"run":"r","split":"s","evaluator":"a","shards":1,"episodes":1,"episode_end":1,"results":[{"type":"x","score":1e999}]}`), []byte(`[`)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeEvalResult(b)
		if err != nil {
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("accepted result does not validate: %v", err)
		}
		if len(r.Results) != r.EpisodeEnd-r.EpisodeStart || len(r.Results) > MaxEvalShardEpisodes {
			t.Fatalf("accepted %d results for the range [%d, %d)", len(r.Results), r.EpisodeStart, r.EpisodeEnd)
		}
		raw, err := EncodeEvalResult(r)
		if err != nil {
			t.Fatalf("accepted result does not encode: %v", err)
		}
		again, err := DecodeEvalResult(raw)
		if err != nil || !reflect.DeepEqual(again, r) {
			t.Fatalf("round trip: got %+v, %v; want %+v", again, err, r)
		}
	})
}
