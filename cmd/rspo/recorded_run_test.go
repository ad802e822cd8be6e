package main

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/rspo-dev/rspo/pipeline"
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
		_, r.stderr, r.err = runRspo(testContext(t), "run", "--data", d, "--run", r.name, "--env-opt", "preset=easy",
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
	if o.Run != run || o.Updates != 1 || o.Tasks != 4 || o.EnvOptions["preset"] != "easy" || o.ExploreGroupSize != 2 || o.Data != dir {
		t.Errorf("config.yaml read back as %+v", o)
	}
}
