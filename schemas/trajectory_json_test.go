package schemas

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// 64-bit integers survive a JSON reader that holds numbers as float64
// (jq, JavaScript): they are written as strings, and both strings and the
// older numbers read back exactly.
func TestTrajectoryJSONKeepsInt64Exact(t *testing.T) {
	tr := fixture()
	tr.TaskSeed, tr.Seq, tr.Steps[0].StateKey = math.MinInt64+1, math.MaxUint64, 1<<53+1
	b, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"task_seed":"-9223372036854775807"`, `"seq":"18446744073709551615"`, `"state_key":"9007199254740993"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s:\n%s", want, b)
		}
	}
	var asFloats struct {
		TaskSeed any `json:"task_seed"`
		Steps    []struct {
			StateKey any `json:"state_key"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(b, &asFloats); err != nil {
		t.Fatal(err)
	}
	if asFloats.Steps[0].StateKey != "9007199254740993" || asFloats.TaskSeed != "-9223372036854775807" {
		t.Errorf("a float64 reader sees state_key %v, task_seed %v", asFloats.Steps[0].StateKey, asFloats.TaskSeed)
	}
	var back Trajectory
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, tr) {
		t.Errorf("read back %s\nwant %s", describe(&back), describe(tr))
	}
}

func TestTrajectoryJSONReadsNumbersAndStrings(t *testing.T) {
	tests := []struct {
		name, json string
		seed       int64
		seq, key   uint64
		err        bool
	}{
		{"numbers, as written before", `{"task_seed": 42, "seq": 7, "steps": [{"state_key": 9}]}`, 42, 7, 9, false},
		{"strings", `{"task_seed": "-42", "seq": "7", "steps": [{"state_key": "18446744073709551615"}]}`, -42, 7, math.MaxUint64, false},
		{"null keeps zero", `{"task_seed": null, "steps": [{"state_key": null}]}`, 0, 0, 0, false},
		{"fraction", `{"task_seed": 1.5}`, 0, 0, 0, true},
		{"negative state key", `{"steps": [{"state_key": "-1"}]}`, 0, 0, 0, true},
		{"word", `{"seq": "many"}`, 0, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tr Trajectory
			err := json.Unmarshal([]byte(tt.json), &tr)
			if tt.err {
				if err == nil {
					t.Fatalf("%s read as %+v", tt.json, tr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			key := uint64(0)
			if len(tr.Steps) > 0 {
				key = tr.Steps[0].StateKey
			}
			if tr.TaskSeed != tt.seed || tr.Seq != tt.seq || key != tt.key {
				t.Errorf("read task_seed %d seq %d state_key %d", tr.TaskSeed, tr.Seq, key)
			}
		})
	}
}

// Both golden JSON files — the current one with strings and the one written
// before, with numbers — read back as the fixture.
func TestGoldenJSONDecodes(t *testing.T) {
	for _, file := range []string{"trajectory_v1.json", "trajectory_v1_numbers.json"} {
		t.Run(file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", file))
			if err != nil {
				t.Fatal(err)
			}
			var got Trajectory
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if want := fixture(); !reflect.DeepEqual(&got, want) {
				t.Errorf("read %s\nwant %s", describe(&got), describe(want))
			}
		})
	}
}
