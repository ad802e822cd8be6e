package learnersvc

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/schemas"
)

func TestConfigValidatesExploreShards(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Config)
		want string // "" means valid
	}{
		{name: "default: one shard", mod: func(*Config) {}},
		{name: "as many shards as a cycle's tasks", mod: func(c *Config) { c.Explore.Shards = 3 * 14 }},
		{name: "more shards than a cycle's tasks", mod: func(c *Config) { c.Explore.Shards = 3*14 + 1 }, want: "at most 42 shards"},
		{name: "negative", mod: func(c *Config) { c.Explore.Shards = -1 }, want: "explore shards -1"},
		{name: "shards with PRM noise", mod: func(c *Config) { c.Explore.Shards, c.Explore.PRMNoise = 2, 0.1 }, want: "explore in one shard"},
		{name: "one shard with PRM noise", mod: func(c *Config) { c.Explore.PRMNoise = 0.1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Config{Run: "r1", RSPO: true}
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
	if got := (Config{Run: "r1"}).WithDefaults().explorePlanShape().Shards; got != 1 {
		t.Errorf("default plan shards: got %d, want 1", got)
	}
}

// planOf returns a plan of n tasks in s shards.
func planOf(n, s int) schemas.CyclePlan {
	p := schemas.CyclePlan{Env: "household", Tasks: make([]schemas.TaskRef, n), ExploreSettings: schemas.ExploreSettings{GroupSize: 1, Collect: 1, Shards: s}}
	for i := range p.Tasks {
		p.Tasks[i] = schemas.TaskRef{ID: fmt.Sprintf("t%d", i)}
	}
	return p
}

func explored(shard, shards, trajectories int64, steps float64) schemas.Event {
	return schemas.Event{Type: schemas.EventCycleExplored, Run: "r1", Cycle: 1, PolicyVersion: 4,
		Shard: shard, Shards: shards, Trajectories: trajectories, Metrics: map[string]float64{"env_steps": steps}}
}

// The learner waits for one report of every shard and sums them; reports
// that cannot answer a shard of the plan are refused with the reason, a
// shard's second report is dropped.
func TestShardReports(t *testing.T) {
	r := newShardReports(planOf(7, 3), 4) // shards of 2, 2 and 3 tasks
	steps := []struct {
		name     string
		e        schemas.Event
		refused  string
		complete bool
	}{
		{name: "shard 0", e: explored(0, 3, 4, 100)},
		{name: "another policy version", e: func() schemas.Event { e := explored(1, 3, 4, 10); e.PolicyVersion = 3; return e }(), refused: "policy version 3"},
		{name: "another shard count", e: explored(1, 2, 4, 10), refused: "the plan has 3 shards"},
		{name: "an unsharded report", e: explored(0, 0, 9, 10), refused: "the plan has 3 shards"},
		{name: "fewer trajectories than tasks", e: explored(2, 3, 2, 10), refused: "fewer than its 3 tasks"},
		{name: "shard 2", e: explored(2, 3, 6, 300)},
		{name: "shard 0 again", e: explored(0, 3, 40, 1000)},
		{name: "shard 1", e: explored(1, 3, 2, 20), complete: true},
	}
	for _, st := range steps {
		err := r.add(st.e)
		switch {
		case st.refused == "" && err != nil:
			t.Errorf("%s: refused: %v", st.name, err)
		case st.refused != "" && (err == nil || !strings.Contains(err.Error(), st.refused)):
			t.Errorf("%s: got %v, want a refusal mentioning %q", st.name, err, st.refused)
		}
		if r.complete() != st.complete {
			t.Errorf("%s: complete %v, want %v", st.name, r.complete(), st.complete)
		}
	}
	if got, want := r.trajectories(), int64(4+6+2); got != want {
		t.Errorf("trajectories: got %d, want %d", got, want)
	}
	if got, want := r.envSteps(), int64(100+300+20); got != want {
		t.Errorf("env steps: got %d, want %d", got, want)
	}
	// a report written before sharding answers a one-shard plan
	one := newShardReports(planOf(2, 0), 4)
	if err := one.add(explored(0, 0, 2, 5)); err != nil || !one.complete() {
		t.Errorf("unsharded report of a one-shard plan: %v, complete %v", err, one.complete())
	}
}
