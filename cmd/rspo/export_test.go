package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// stepRow is the part of a trajectory export's row the tests check, read
// with a Parquet reader independent of the one that wrote the file.
type stepRow struct {
	StreamSeq    uint64  `parquet:"stream_seq"`
	TrajectoryID string  `parquet:"trajectory_id"`
	TaskSeed     int64   `parquet:"task_seed"`
	GroupID      string  `parquet:"group_id"`
	PRMWarmup    bool    `parquet:"prm_warmup"`
	Success      bool    `parquet:"success"`
	CreatedAt    int64   `parquet:"created_at"`
	Steps        int32   `parquet:"steps"`
	Step         int32   `parquet:"step"`
	Action       string  `parquet:"action"`
	ActionIndex  int32   `parquet:"action_index"`
	LogProb      float64 `parquet:"behavior_log_prob"`
	Reward       float64 `parquet:"reward"`
	StateKey     uint64  `parquet:"state_key"`
}

// A Parquet export has one row per step of every trajectory, in stream
// order, with the trajectory's and the step's values.
func TestExportParquetOneRowPerStep(t *testing.T) {
	dir, run := trainedRun(t)
	out := filepath.Join(t.TempDir(), "steps.parquet")
	if _, stderr, err := runRspo(testContext(t), "export", "--data", dir, "--run", run, "--subject", "traj.onpolicy", "--out", out); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	rows, err := parquet.ReadFile[stepRow](out)
	if err != nil {
		t.Fatal(err)
	}
	var want []stepRow
	for _, r := range replayLines(t, "--data", dir, "--run", run, "--subject", "traj.onpolicy") {
		tr := r.Trajectory
		for i, s := range tr.Steps {
			want = append(want, stepRow{TrajectoryID: tr.ID, TaskSeed: tr.TaskSeed, GroupID: tr.GroupID, PRMWarmup: tr.PRMWarmup(),
				Success: tr.Success, CreatedAt: tr.CreatedAt.UnixMicro(), Steps: int32(len(tr.Steps)), Step: int32(i),
				Action: s.Action, ActionIndex: s.ActionIndex, LogProb: s.BehaviorLogProb, Reward: s.Reward, StateKey: s.StateKey})
		}
	}
	if len(rows) != len(want) || len(rows) == 0 {
		t.Fatalf("%d rows, want %d (one per step)", len(rows), len(want))
	}
	for i := range rows {
		got := rows[i]
		if got.StreamSeq == 0 {
			t.Errorf("row %d: stream_seq 0", i)
		}
		got.StreamSeq = 0
		if got != want[i] {
			t.Fatalf("row %d:\n got %+v\nwant %+v", i, got, want[i])
		}
	}
}

// A JSON-lines export has the same rows, the 64-bit integers as strings;
// metrics have one row per value; --skip-warmup leaves the warm-up out.
func TestExportRowCounts(t *testing.T) {
	dir, run := trainedRun(t)
	tmp := t.TempDir()
	export := func(args ...string) []map[string]any {
		t.Helper()
		out := filepath.Join(tmp, "out.jsonl")
		args = append([]string{"export", "--data", dir, "--run", run, "--format", "jsonl", "--out", out}, args...)
		if _, stderr, err := runRspo(testContext(t), args...); err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		return readJSONL(t, out)
	}
	steps, warmSteps := 0, 0
	for _, r := range replayLines(t, "--data", dir, "--run", run, "--subject", "traj.onpolicy") {
		steps += len(r.Trajectory.Steps)
		if r.Trajectory.PRMWarmup() {
			warmSteps += len(r.Trajectory.Steps)
		}
	}
	all := export("--subject", "traj.onpolicy")
	if len(all) != steps {
		t.Errorf("%d rows, want %d steps", len(all), steps)
	}
	if seed, ok := all[0]["task_seed"].(string); !ok || seed == "" {
		t.Errorf("task_seed %v is not a string", all[0]["task_seed"])
	} else if _, err := strconv.ParseInt(seed, 10, 64); err != nil {
		t.Errorf("task_seed %q: %v", seed, err)
	}
	if kept := export("--subject", "traj.onpolicy", "--skip-warmup"); warmSteps == 0 || len(kept) != steps-warmSteps {
		t.Errorf("--skip-warmup: %d rows, want %d of %d", len(kept), steps-warmSteps, steps)
	}
	values := 0
	out, _, err := runRspo(testContext(t), "replay", "--data", dir, "--run", run, "--subject", "metrics")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(out) {
		var m struct {
			Metrics struct {
				Values map[string]float64 `json:"values"`
			} `json:"metrics"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		values += len(m.Metrics.Values)
	}
	metrics := export("--subject", "metrics")
	if len(metrics) != values || values == 0 {
		t.Errorf("%d metrics rows, want %d values", len(metrics), values)
	}
	if _, ok := metrics[0]["value"].(float64); !ok || metrics[0]["name"] == "" {
		t.Errorf("metrics row %v", metrics[0])
	}
}

func readJSONL(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v", sc.Bytes(), err)
		}
		rows = append(rows, m)
	}
	return rows
}

func TestExportFlagErrors(t *testing.T) {
	dir, run := trainedRun(t)
	out := filepath.Join(t.TempDir(), "x")
	base := []string{"export", "--data", dir, "--out", out}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"subject", append(base, "--run", run, "--subject", "ctrl"), `--subject "ctrl": give one of traj.onpolicy`},
		{"format", append(base, "--run", run, "--subject", "metrics", "--format", "csv"), "give parquet or jsonl"},
		{"warm-up off the on-policy stream", append(base, "--run", run, "--subject", "swapped", "--skip-warmup"), "--skip-warmup"},
		{"no such run", append(base, "--run", "nope", "--subject", "metrics"), "run nope does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runRspo(testContext(t), tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error with %q", err, tt.want)
			}
		})
	}
}
