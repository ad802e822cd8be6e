package streamstest

import (
	"fmt"
	"time"

	"github.com/rspo-dev/rspo/schemas"
)

// Trajectory returns a valid three-step trajectory of run, the seq-th made
// by producer "p0" from src. Its fields vary with seq (even seqs succeed,
// task types cycle through pick, heat, clean) so tests can tell
// trajectories apart and compute per-task figures.
func Trajectory(run string, src schemas.Source, seq uint64) *schemas.Trajectory {
	success := seq%2 == 0
	reward := 0.0
	if success {
		reward = 1
	}
	t := &schemas.Trajectory{
		ID:  schemas.TrajectoryID(run, src, "p0", seq),
		Run: run, Cycle: int64(seq / 4), Source: src, PolicyVersion: int64(seq), Producer: "p0", Seq: seq,
		Env: "household", TaskID: fmt.Sprintf("task-%d", seq%3), TaskType: []string{"pick", "heat", "clean"}[seq%3],
		TaskSeed: int64(seq) * 7, Split: "train", Instruction: "put a mug in the cabinet",
		GroupID: fmt.Sprintf("g%d", seq/4), OutcomeReward: reward, Success: success,
		CreatedAt: time.Unix(1700000000+int64(seq), 123456789).UTC(),
	}
	admissible := []string{"go to cabinet 1", "take mug 1", "open cabinet 1"}
	for i := range 3 {
		r := 0.0
		if i == 2 {
			r = reward
		}
		t.Steps = append(t.Steps, schemas.Step{
			Observation: fmt.Sprintf("step %d of trajectory %d", i, seq), Admissible: admissible,
			NumAdmissible: 3, Action: admissible[i], ActionIndex: int32(i),
			BehaviorLogProb: -0.25 * float64(i+1), Reward: r, DenseReward: 0.1 * float64(i),
			StateKey: seq*10 + uint64(i),
		})
	}
	return t
}
