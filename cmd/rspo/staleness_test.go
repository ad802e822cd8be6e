package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rspo-dev/rspo/streams"
)

// A pipelined learner (--max-staleness 2) of separate stage processes,
// killed once it has made two updates and started again, finishes the
// run: it asks again for the rollouts it had asked for ahead, and every
// update trains on rollouts at most 2 versions old.
func TestPipelinedLearnerKilledMidRunResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every stage as a process; skipped with -short")
	}
	c := startStages(t, "pipelined")
	args := append(c.learnerArgs(4), "--max-staleness", "2")
	learner := newProc(t, c.bin, filepath.Join(c.dir, "learner.log"), args...)
	c.waitForUpdate(2)
	learner.kill()
	out, err := exec.CommandContext(c.ctx, c.bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("restarted learner: %v\n%s", err, out)
	}
	c.checkFinished(4)
	lags := map[int64]float64{}
	err = streams.Replay(c.ctx, c.js, streams.ReplayOptions{Run: c.run, Subject: "metrics.learner"}, func(m streams.Message) error {
		if m.Metrics != nil && m.Metrics.Kind == "update" {
			lags[m.Metrics.Update] = m.Metrics.Values["version_lag_max"]
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for u := int64(1); u <= 4; u++ { // update u (1-based) trains version u−1 on rollouts of max(0, u−3)
		if want := float64(min(u-1, 2)); lags[u] != want {
			t.Errorf("update %d: version lag %v, want %v (all: %v)", u, lags[u], want, lags)
		}
	}
}
