package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/prm/prmsvc"
	"github.com/rspo-dev/rspo/prm/prmtest"
	"github.com/rspo-dev/rspo/prm/trajfile"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// TestPRMCollectTrainEval runs the offline path end to end on household:
// collect rollouts of the untrained policy, train on the file, evaluate.
func TestPRMCollectTrainEval(t *testing.T) {
	ctx := testContext(t)
	dir := t.TempDir()
	data, model := filepath.Join(dir, "easy.arrow"), filepath.Join(dir, "prm.bin")
	out, _, err := runRspo(ctx, "prm", "collect", "--env-opt", "preset=easy", "--tasks", "12", "--per-task", "2", "--out", data)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "24 trajectories of household") {
		t.Errorf("collect output: %q", out)
	}
	trajs, err := trajfile.Read(data)
	if err != nil || len(trajs) != 24 {
		t.Fatalf("file holds %d trajectories (%v), want 24", len(trajs), err)
	}
	if len(trajs[0].Steps[0].Admissible) != 0 || trajs[0].Steps[0].NumAdmissible == 0 {
		t.Errorf("admissible lists should be dropped but counted: %d listed, %d counted",
			len(trajs[0].Steps[0].Admissible), trajs[0].Steps[0].NumAdmissible)
	}
	out, _, err = runRspo(ctx, "prm", "train", "--file", data, "--out", model, "--epochs", "3", "--dim", "32", "--hidden", "8", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep prm.TrainReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("train --json output is not a report: %v\n%s", err, out)
	}
	if rep.Trajectories != 24 || rep.Version != 1 || rep.Epochs < 1 || rep.Epochs > 3 {
		t.Errorf("report: %d trajectories, version %d, %d epochs", rep.Trajectories, rep.Version, rep.Epochs)
	}
	m, err := prm.LoadFile(model)
	if err != nil || m.Version != 1 || m.Hidden() != 8 || m.Featurizer().Dim() != 32 {
		t.Fatalf("snapshot: %v, %+v", err, m)
	}
	out, _, err = runRspo(ctx, "prm", "eval", "--model", model, "--file", data)
	if err != nil || !strings.Contains(out, "PRM v1 on 24 trajectories") {
		t.Errorf("eval: %q, %v", out, err)
	}
	out, _, err = runRspo(ctx, "prm", "train", "--file", data, "--warm", model, "--out", model, "--epochs", "1")
	if err != nil || !strings.Contains(out, "PRM v2 trained") {
		t.Errorf("warm-started train: %q, %v", out, err)
	}
}

// TestPRMTrainFromRunsAndPublish trains from two recorded runs read through
// replay and publishes the model to a third run.
func TestPRMTrainFromRunsAndPublish(t *testing.T) {
	ctx := testContext(t)
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	for _, run := range []string{"easyA", "easyB"} {
		trajs, _ := prmtest.Decisive(run, 1, 40, 4)
		for _, tr := range trajs {
			if _, err := streams.PublishTrajectory(ctx, js, tr); err != nil {
				t.Fatal(err)
			}
		}
	}
	model := filepath.Join(t.TempDir(), "prm.bin")
	out, _, err := runRspo(ctx, "prm", "train", "--nats", s.ClientURL(), "--run", "easyA", "--run", "easyB",
		"--from-seq", "1", "--from-seq", "11", "--out", model, "--epochs", "5", "--publish", "--as-run", "hard1")
	if err != nil {
		t.Fatal(err)
	}
	// easyB's messages are stream sequences 41..80, so --from-seq 11 keeps all of them.
	if !strings.Contains(out, "trained on 80 trajectories") {
		t.Errorf("train output: %q", out)
	}
	got, err := prmsvc.Load(ctx, js, "hard1", 1)
	if err != nil {
		t.Fatalf("published model: %v", err)
	}
	if !got.Info.Trained {
		t.Error("published model is not marked trained")
	}
	var events []schemas.Event
	err = streams.Replay(ctx, js, streams.ReplayOptions{Run: "hard1", Subject: "ctrl.prm.published"}, func(m streams.Message) error {
		events = append(events, *m.Event)
		return nil
	})
	if err != nil || len(events) != 1 || events[0].Metrics["trajectories"] != 80 {
		t.Errorf("prm.published events: %+v (%v)", events, err)
	}
}

func TestPRMCommandFlagErrors(t *testing.T) {
	ctx := testContext(t)
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no data", []string{"prm", "train", "--out", "x"}, "no data"},
		{"no out", []string{"prm", "train", "--file", "x"}, "--out FILE is required"},
		{"from-seq count", []string{"prm", "train", "--run", "a", "--run", "b", "--from-seq", "1", "--from-seq", "2", "--from-seq", "3", "--out", "x"}, "3 --from-seq values for 2 --run"},
		{"from-seq without run", []string{"prm", "train", "--file", "f", "--from-seq", "3", "--out", "x"}, "--from-seq needs --run"},
		{"bad run name", []string{"prm", "train", "--run", "a.b", "--out", "x"}, "--run"},
		{"publish without run", []string{"prm", "train", "--file", "f", "--out", "x", "--publish"}, "--publish needs --as-run"},
		{"missing file", []string{"prm", "train", "--file", filepath.Join(dir, "nope"), "--out", "x"}, "no such file"},
		{"bad dim", []string{"prm", "train", "--file", "f", "--out", "x", "--dim", "-1"}, "--dim"},
		{"collect too many", []string{"prm", "collect", "--tasks", "100000", "--out", "x"}, "exceeds"},
		{"collect bad env opt", []string{"prm", "collect", "--env-opt", "novalue", "--tasks", "1", "--out", filepath.Join(dir, "c")}, "KEY=VALUE"},
		{"eval without model", []string{"prm", "eval", "--file", "f"}, "--model FILE is required"},
		{"serve two models", []string{"serve", "prm", "--run", "r", "--model", "m", "--random", "3"}, "exactly one of"},
		{"serve no model", []string{"serve", "prm", "--run", "r"}, "exactly one of"},
		// Training flags went with serve prm's refresh: the learner refreshes.
		{"serve with warm", []string{"serve", "prm", "--run", "r", "--random", "1", "--warm", "w"}, "unknown flag: --warm"},
		{"serve extra run", []string{"serve", "prm", "--run", "r", "--random", "1", "--extra-run", "e"}, "--prm-refresh-extra-run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runRspo(ctx, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestPRMRandom(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.bin")
	if _, _, err := runRspo(testContext(t), "prm", "random", "--seed", "7", "--out", path); err != nil {
		t.Fatal(err)
	}
	m, err := prm.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	trajs, _ := prmtest.Decisive("r", 1, 1, 3)
	if got, want := m.Score(trajs[0]), prm.Random(7).Score(trajs[0]); got != want {
		t.Errorf("random snapshot scores %v, want Random(7)'s %v", got, want)
	}
	if m.ShapingEnabled(0.6) {
		t.Error("the random control passes an AUC gate")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

func TestPRMCollectPresetIsADeprecatedAlias(t *testing.T) {
	tests := []struct {
		name    string
		preset  string
		envOpts map[string]string
		want    map[string]string
		wantErr string
	}{
		{"env-opt", "", map[string]string{"preset": "easy"}, map[string]string{"preset": "easy"}, ""},
		{"preset alone", "medium", nil, map[string]string{"preset": "medium"}, ""},
		{"both agreeing", "easy", map[string]string{"preset": "easy", "max_steps": "9"}, map[string]string{"preset": "easy", "max_steps": "9"}, ""},
		{"both disagreeing", "easy", map[string]string{"preset": "hard"}, nil, "disagree"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := prmCollectFlags{preset: tt.preset, envOpts: tt.envOpts}.envOptions()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !maps.Equal(got, tt.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	out := filepath.Join(t.TempDir(), "t.arrow")
	// cobra prints the warning to the command's output (stderr unless a
	// test redirects it), so look at both.
	stdout, stderr, err := runRspo(testContext(t), "prm", "collect", "--preset", "easy", "--tasks", "1", "--per-task", "1", "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	if both := stdout + stderr; !strings.Contains(both, "--preset has been deprecated") || !strings.Contains(both, "--env-opt preset=") {
		t.Errorf("output %q does not say --preset is deprecated in favour of --env-opt", both)
	}
}

// prm train, eval and random read and publish to the store of rspo run
// given as --data, with no server started first: the run's trajectories
// train the model, and a published model lands in that store.
func TestPRMCommandsOnARunsStore(t *testing.T) {
	src, run := trainedRun(t)
	dir := t.TempDir() // a copy: the recorded run is shared by other tests
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	model := filepath.Join(t.TempDir(), "prm.bin")
	out, stderr, err := runRspo(ctx, "prm", "train", "--data", dir, "--run", run, "--out", model, "--epochs", "3",
		"--publish", "--as-run", "other")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "from 1 run(s)") || strings.Contains(stderr, "read 0 trajectories") || !strings.Contains(out, "wrote "+model) {
		t.Errorf("prm train --data: stdout %q, stderr %q", out, stderr)
	}
	if out, stderr, err = runRspo(ctx, "prm", "eval", "--data", dir, "--run", run, "--model", model); err != nil ||
		!strings.Contains(out, "AUC") {
		t.Errorf("prm eval --data: %v, stdout %q, stderr %q", err, out, stderr)
	}
	if _, stderr, err = runRspo(ctx, "prm", "random", "--data", dir, "--out", filepath.Join(t.TempDir(), "r.bin"),
		"--publish", "--as-run", "other"); err != nil {
		t.Fatalf("prm random --data: %v\n%s", err, stderr)
	}
	out, stderr, err = runRspo(ctx, "replay", "--data", dir, "--run", "other", "--subject", "ctrl.prm.published")
	if err != nil || strings.Count(out, `"type":"prm.published"`) != 2 {
		t.Errorf("published models in the store: %v\n%s\n%s", err, out, stderr)
	}
	if _, _, err = runRspo(ctx, "prm", "train", "--data", dir, "--nats", "nats://127.0.0.1:1", "--run", run, "--out", model); err == nil ||
		!strings.Contains(err.Error(), "exclusive") {
		t.Errorf("--data with --nats: %v, want a refusal", err)
	}
}
