package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rspo-dev/rspo/pipeline"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// recordedRun is one small in-process RSPO run (with its PRM warm-up)
// that the tests reading a finished run share; it is trained once.
var recordedRun struct {
	once      sync.Once
	dir, name string
	err       error
	stderr    string
}

// trainedRun returns the data directory and name of the shared run.
func trainedRun(t *testing.T) (dir, run string) {
	t.Helper()
	r := &recordedRun
	r.once.Do(func() {
		d, err := os.MkdirTemp("", "rspo-recorded-run-")
		if err != nil {
			r.err = err
			return
		}
		r.dir, r.name = d, "recorded"
		_, r.stderr, r.err = runRspo(testContext(t), "run", "--data", d, "--run", r.name, "--env-opt", "preset=easy", "--recipe", "paper", // a PRM warm-up on the run itself
			"--updates", "1", "--tasks", "4", "--group", "2", "--k", "1", "--eval-episodes", "2", "--prm-warmup-tasks", "3")
	})
	if r.err != nil {
		t.Fatalf("training the recorded run: %v\n%s", r.err, r.stderr)
	}
	return r.dir, r.name
}

func TestMain(m *testing.M) {
	code := m.Run()
	if recordedRun.dir != "" {
		os.RemoveAll(recordedRun.dir)
	}
	os.Exit(code)
}

// The report directory holds the run's effective settings as YAML, which
// read back as the options the run was started with.
func TestReportSavesConfigYAML(t *testing.T) {
	dir, run := trainedRun(t)
	o := defaultRunOptions()
	if _, err := pipeline.LoadOptionsFile(filepath.Join(dir, run, "report", pipeline.ConfigFile), &o); err != nil {
		t.Fatal(err)
	}
	if o.Run != run || o.Updates != 1 || o.Tasks != 4 || o.EnvOptions["preset"] != "easy" || o.Explore.GroupSize != 2 || o.Data != dir {
		t.Errorf("config.yaml read back as %+v", o)
	}
}

// serveRecorded starts a server on the shared run's store and returns its
// URL.
func serveRecorded(t *testing.T) string {
	t.Helper()
	dir, _ := trainedRun(t)
	emb, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: filepath.Join(dir, "nats"), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Shutdown)
	return emb.ClientURL()
}

// replayLines replays with args and decodes each line's headers and
// trajectory.
func replayLines(t *testing.T, args ...string) []replayedTrajectory {
	t.Helper()
	out, stderr, err := runRspo(testContext(t), append([]string{"replay"}, args...)...)
	if err != nil {
		t.Fatalf("replay %v: %v\n%s", args, err, stderr)
	}
	var got []replayedTrajectory
	for line := range strings.Lines(out) {
		var r replayedTrajectory
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		got = append(got, r)
	}
	return got
}

type replayedTrajectory struct {
	Headers    map[string]string   `json:"headers"`
	Trajectory *schemas.Trajectory `json:"trajectory"`
}

// The PRM warm-up's rollouts carry the Rspo-Warmup header and the tag in
// their group id, and --skip-warmup leaves exactly them out.
func TestReplaySkipWarmup(t *testing.T) {
	url := serveRecorded(t)
	_, run := trainedRun(t)
	all := replayLines(t, "--nats", url, "--run", run, "--subject", "traj.onpolicy")
	warm := 0
	for _, r := range all {
		header := r.Headers[streams.HeaderWarmup] == "prm"
		if header != strings.HasPrefix(r.Trajectory.GroupID, "prm-warmup-") {
			t.Errorf("trajectory %s: header %v, group %s", r.Trajectory.ID, header, r.Trajectory.GroupID)
		}
		if header {
			warm++
		}
	}
	if want := 3 * 2; warm != want { // --prm-warmup-tasks 3, --group 2
		t.Fatalf("%d warm-up rollouts of %d, want %d", warm, len(all), want)
	}
	kept := replayLines(t, "--nats", url, "--run", run, "--subject", "traj.onpolicy", "--skip-warmup")
	if len(kept) != len(all)-warm {
		t.Errorf("--skip-warmup kept %d of %d, want %d", len(kept), len(all), len(all)-warm)
	}
	for _, r := range kept {
		if r.Trajectory.PRMWarmup() {
			t.Errorf("--skip-warmup kept %s", r.Trajectory.ID)
		}
	}
	if _, _, err := runRspo(testContext(t), "replay", "--nats", url, "--run", run, "--subject", "metrics", "--skip-warmup"); err == nil ||
		!strings.Contains(err.Error(), "--skip-warmup") {
		t.Errorf("--skip-warmup on metrics: %v", err)
	}
}
