package streams

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/schemas"
)

// A message's JSON form writes the 64-bit seeds of trajectories and
// rollout requests as strings, exact for readers that hold numbers as
// float64.
func TestMessageJSONWritesSeedsAsStrings(t *testing.T) {
	req := schemas.RolloutRequest{ID: "req-1", Run: "r", Source: schemas.SourceOnPolicy, Env: "household", GroupSize: 2,
		Seed: 1<<62 + 1, Tasks: []schemas.TaskRef{{ID: "t1", Seed: 1<<53 + 1}}}
	tr := &schemas.Trajectory{ID: "x", TaskSeed: 1<<60 + 3, Steps: []schemas.Step{{StateKey: 1<<63 + 5}}}
	tests := []struct {
		name string
		msg  Message
		want []string
	}{
		{"rollout request", Message{Subject: "rspo.r.work.rollout", Rollout: &req},
			[]string{`"seed":"4611686018427387905"`, `"tasks":[{"id":"t1"`, `"seed":"9007199254740993"`, `"group_size":2`}},
		{"trajectory", Message{Subject: "rspo.r.traj.onpolicy", Trajectory: tr},
			[]string{`"task_seed":"1152921504606846979"`, `"state_key":"9223372036854775813"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.msg)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("JSON lacks %s:\n%s", w, b)
				}
			}
			if strings.Count(string(b), `"seed":`) > strings.Count(string(b), `"seed":"`) {
				t.Errorf("a seed is a number:\n%s", b)
			}
		})
	}
}
