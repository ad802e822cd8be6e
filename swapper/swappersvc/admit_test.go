package swappersvc

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
	"github.com/rspo-dev/rspo/swapper/swappertest"
)

// counterPlan is a cycle-1 plan over the counter tasks of seeds, with a nonce.
func counterPlan(t *testing.T, seeds ...int64) schemas.CyclePlan {
	t.Helper()
	env, err := envs.New(swappertest.CounterEnv, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan := schemas.CyclePlan{Env: swappertest.CounterEnv, ExploreSettings: schemas.ExploreSettings{GroupSize: 1, Collect: 1}, Nonce: "5eed0f4a11ce"}
	for _, seed := range seeds {
		tasks, _ := env.Tasks(envs.SplitTrain, 1, seed)
		plan.Tasks = append(plan.Tasks, schemas.TaskRef{ID: tasks[0].ID, Type: tasks[0].Type, Split: tasks[0].Split, Seed: seed})
	}
	return plan
}

// explored is the counter episode of seed as the explorer publishes it
// under plan: the tag's group and the plan's id for seq.
func explored(t *testing.T, plan schemas.CyclePlan, seed int64, seq uint64, actions ...string) *schemas.Trajectory {
	tr := swappertest.PlayCounter(t, seed, actions...)
	tr.Seq, tr.GroupID = seq, "c1-final/"+tr.TaskID
	tr.ID = plan.TrajectoryID("r", "c1-final", seq)
	return tr
}

// Explorer records that are not their cycle's — published under its
// predictable ids (no nonce), ahead of a cycle not yet planned — or that
// no episode could have produced (a success with log-prob −1e308, an
// action index that disagrees with its list) used to be swapped and
// stored; without --verify a forged success went into the buffer. They are
// dead-lettered with the reason, and the genuine record is swapped.
func TestServiceRefusesRecordsNotOfTheirCycle(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	sub := streams.Subjects("r")
	plan := counterPlan(t, 2, 3, 4, 5, 6)
	raw, _ := json.Marshal(plan)
	if _, err := streams.AnnounceCycle(ctx, js, schemas.Event{Type: schemas.EventCycleStarted, Run: "r", Cycle: 1, Config: raw,
		Time: time.Unix(1700000000, 0).UTC()}); err != nil {
		t.Fatal(err)
	}
	startService(t, js, Config{Run: "r", Batch: 8})

	genuine := explored(t, plan, 2, 0, "inc", "stop")
	squatted := explored(t, plan, 3, 1, "inc", "stop")
	squatted.ID = schemas.TrajectoryID("r", schemas.SourceExplore, "c1-final", 1) // the id without the cycle's nonce
	early := explored(t, plan, 4, 2, "inc", "stop")
	early.Cycle = 2 // cycle 2 has no plan yet
	absurd := explored(t, plan, 5, 3, "inc", "stop")
	absurd.Success, absurd.OutcomeReward = true, 1
	absurd.Steps[0].BehaviorLogProb = -1e308
	misindexed := explored(t, plan, 6, 4, "inc", "stop")
	misindexed.Steps[1].ActionIndex = -1 // "stop" is in its list
	for _, tr := range []*schemas.Trajectory{squatted, early, absurd, misindexed, genuine} {
		if _, err := streams.PublishTrajectory(ctx, js, tr); err != nil {
			t.Fatal(err)
		}
	}
	swapped := waitMessages(t, js, streams.StreamSwapped, sub.Swapped, 1)
	if got, err := schemas.DecodeTrajectory(swapped[0].Data); err != nil || got.ID != genuine.ID {
		t.Errorf("swapped %v (%v), want the genuine record %s", got, err, genuine.ID)
	}
	var reasons []string
	for _, m := range waitMessages(t, js, streams.StreamDLQ, sub.DLQ(Component), 4) {
		reasons = append(reasons, m.Header.Get(streams.HeaderDLQReason))
	}
	all := strings.Join(reasons, "\n")
	for _, want := range []string{
		squatted.ID + " is not one of cycle 1's",
		early.ID + " of cycle 2, which has no plan on the bus",
		"steps[0].behavior_log_prob: -1e+308 is below -100",
		"steps[1].action_index: -1 (not admissible), but the action \"stop\" is in the admissible list",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("dead-letter reasons %q, want one to mention %q", reasons, want)
		}
	}
}
