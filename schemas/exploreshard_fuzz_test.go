package schemas

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeExploreShard decodes arbitrary work items: a shard that is
// accepted validates and survives an encode/decode round trip unchanged.
func FuzzDecodeExploreShard(f *testing.F) {
	good, _ := json.Marshal(ExploreShard{Run: "r1", Cycle: 2, PolicyVersion: 6, Shard: 1, Shards: 3, TaskStart: 5, TaskEnd: 10})
	for _, seed := range [][]byte{good, []byte(`{}`), []byte(`{"run":"r","shards":1,"task_end":1}`),
		[]byte(`{"run":"r","shard":2,"shards":2,"task_start":0,"task_end":1}`), []byte(`{"run":"r","shards":1,"task_start":3,"task_end":2}`), []byte(`[`)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeExploreShard(b)
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("accepted shard does not validate: %v", err)
		}
		raw, err := EncodeExploreShard(s)
		if err != nil {
			t.Fatalf("accepted shard does not encode: %v", err)
		}
		again, err := DecodeExploreShard(raw)
		if err != nil || again != s {
			t.Fatalf("round trip: got %+v, %v; want %+v", again, err, s)
		}
	})
}
