package pipeline

import (
	"context"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// A forged "cycle 0 explored, 0 trajectories" used to end the learner's
// wait for the explorer at once: the cycle trained on an empty buffer and
// counted no explorer steps. The learner must ignore an event that cannot
// answer its plan and wait for the explorer's own.
func TestLearnerIgnoresAForgedCycleExplored(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	forged := schemas.Event{Type: schemas.EventCycleExplored, Run: "t1", Cycle: 0, Time: time.Unix(1700000000, 0).UTC()}
	if _, err := streams.PublishEvent(context.Background(), js, forged); err != nil {
		t.Fatal(err)
	}
	cfg := smallRun(t, t.TempDir(), true)
	cfg.NATSURL = s.ClientURL()
	cfg.Learner.Updates, cfg.Learner.Trainer.Alpha = 2, 0.25 // one cycle
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.EnvStepsExplorer == 0 {
		t.Errorf("explorer steps 0: the learner took the forged cycle.explored for the explorer's")
	}
	var ignored float64
	err = streams.Replay(context.Background(), js, streams.ReplayOptions{Run: "t1", Subject: "metrics.learner"}, func(m streams.Message) error {
		if m.Metrics != nil && m.Metrics.Kind == "update" {
			ignored = max(ignored, m.Metrics.Values["ignored_messages"])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ignored < 1 {
		t.Errorf("ignored messages %v, want the forged event counted", ignored)
	}
}
