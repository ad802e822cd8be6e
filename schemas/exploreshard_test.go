package schemas

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// planOf returns a valid plan with n tasks in s shards.
func planOf(n, s int) CyclePlan {
	p := validPlan()
	p.Tasks = make([]TaskRef, n)
	for i := range p.Tasks {
		p.Tasks[i] = TaskRef{ID: fmt.Sprintf("household/train/%d", i)}
	}
	p.Shards = s
	return p
}

// A plan's shards cover its tasks once, in order, each non-empty, sizes
// within one of each other; every shard checks against its plan.
func TestShardsOfCoverThePlan(t *testing.T) {
	for _, tc := range []struct{ tasks, shards int }{{1, 0}, {1, 1}, {5, 1}, {5, 2}, {5, 3}, {5, 5}, {16, 3}, {4096, 7}} {
		t.Run(fmt.Sprintf("%d tasks in %d shards", tc.tasks, tc.shards), func(t *testing.T) {
			p := planOf(tc.tasks, tc.shards)
			if err := p.Validate(); err != nil {
				t.Fatal(err)
			}
			shards := ShardsOf("r1", 4, 7, p)
			if len(shards) != max(1, tc.shards) {
				t.Fatalf("got %d shards, want %d", len(shards), max(1, tc.shards))
			}
			next, least, most := 0, tc.tasks, 0
			for k, sh := range shards {
				if err := sh.Validate(); err != nil {
					t.Errorf("shard %d: %v", k, err)
				}
				if err := sh.CheckPlan(p); err != nil {
					t.Errorf("shard %d: %v", k, err)
				}
				if sh.Shard != k || sh.TaskStart != next || sh.Run != "r1" || sh.Cycle != 4 || sh.PolicyVersion != 7 {
					t.Errorf("shard %d: %+v, want index %d starting at task %d", k, sh, k, next)
				}
				next = sh.TaskEnd
				least, most = min(least, sh.TaskEnd-sh.TaskStart), max(most, sh.TaskEnd-sh.TaskStart)
			}
			if next != tc.tasks || least < 1 || most-least > 1 {
				t.Errorf("shards end at task %d of %d, sizes %d..%d", next, tc.tasks, least, most)
			}
		})
	}
}

func TestExploreShardRoundTrip(t *testing.T) {
	want := ExploreShard{Run: "r1", Cycle: 2, PolicyVersion: 6, Shard: 1, Shards: 3, TaskStart: 5, TaskEnd: 10}
	b, err := EncodeExploreShard(want)
	if err != nil {
		t.Fatal(err)
	}
	if golden := `{"run":"r1","cycle":2,"policy_version":6,"shard":1,"shards":3,"task_start":5,"task_end":10}`; string(b) != golden {
		t.Errorf("wire form %s, want %s", b, golden)
	}
	got, err := DecodeExploreShard(b)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, %v; want %+v", got, err, want)
	}
}

func TestExploreShardValidate(t *testing.T) {
	tests := []struct {
		name      string
		modify    func(*ExploreShard)
		wantField string
	}{
		{"bad run", func(s *ExploreShard) { s.Run = "a.b" }, "run"},
		{"negative cycle", func(s *ExploreShard) { s.Cycle = -1 }, "cycle/policy_version"},
		{"no shards", func(s *ExploreShard) { s.Shards = 0 }, "shards"},
		{"shard past the shards", func(s *ExploreShard) { s.Shard = 3 }, "shard"},
		{"negative shard", func(s *ExploreShard) { s.Shard = -1 }, "shard"},
		{"empty range", func(s *ExploreShard) { s.TaskEnd = s.TaskStart }, "task_start/task_end"},
		{"range past the task limit", func(s *ExploreShard) { s.TaskEnd = MaxRolloutTasks + 1 }, "task_start/task_end"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := ExploreShard{Run: "r1", Shard: 1, Shards: 3, TaskStart: 5, TaskEnd: 10}
			tc.modify(&s)
			checkField(t, "Validate", s.Validate(), tc.wantField)
			if _, err := EncodeExploreShard(s); !errors.Is(err, ErrInvalid) {
				t.Errorf("EncodeExploreShard: got %v, want ErrInvalid", err)
			}
		})
	}
	_, err := DecodeExploreShard([]byte(`{"run":`))
	checkField(t, "DecodeExploreShard(bad JSON)", err, "explore shard")
}

func TestExploreShardCheckPlan(t *testing.T) {
	p := planOf(5, 2)
	for _, tc := range []struct {
		name      string
		shard     ExploreShard
		wantField string
	}{
		{"other shard count", ExploreShard{Run: "r1", Shard: 0, Shards: 3, TaskStart: 0, TaskEnd: 1}, "shards"},
		{"other range", ExploreShard{Run: "r1", Shard: 1, Shards: 2, TaskStart: 1, TaskEnd: 5}, "task_start/task_end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkField(t, "CheckPlan", tc.shard.CheckPlan(p), tc.wantField)
		})
	}
}
