package pipeline

import (
	"testing"
	"time"
)

// A shard an explorer dead-letters — here, over its step budget — is
// never explored. The learner used to wait out its explore timeout (10
// minutes by default) and train the cycle without exploration; the run
// stops at once with the explorer's reason.
func TestExploreShardOverTheBudgetStopsTheRun(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	cfg := smallRun(t, t.TempDir(), true)
	cfg.Learner.Trainer.Alpha = 0.25
	cfg.Learner.ExploreTimeout = 10 * time.Minute
	cfg.Explorer.StepBudget = 10
	runStopsWith(t, cfg, "exploration of cycle 0", "dead-lettered by the explorer", "over the explorer's step budget of 10")
}
