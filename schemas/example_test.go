package schemas_test

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/rspo-dev/rspo/schemas"
)

func Example() {
	t := &schemas.Trajectory{
		ID:            schemas.TrajectoryID("demo", schemas.SourceOnPolicy, "actor-0", 1),
		Run:           "demo",
		Source:        schemas.SourceOnPolicy,
		Env:           "household",
		TaskID:        "household/train/1",
		OutcomeReward: 1,
		Success:       true,
		Steps: []schemas.Step{
			{Observation: "You see a mug 1.", Admissible: []string{"take mug 1", "look"}, NumAdmissible: 2,
				Action: "take mug 1", ActionIndex: 0, BehaviorLogProb: -0.69},
			{Observation: "You pick up the mug 1.", Admissible: []string{"put mug 1 in sink 1"}, NumAdmissible: 1,
				Action: "put mug 1 in sink 1", ActionIndex: 0, Reward: 1},
		},
	}
	b, err := schemas.EncodeTrajectory(t)
	if err != nil {
		fmt.Println(err)
		return
	}
	got, err := schemas.DecodeTrajectory(b)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got.ID, len(got.Steps), got.Steps[1].Action)

	_, err = schemas.DecodeTrajectory(b[:len(b)/2])
	fmt.Println(errors.Is(err, schemas.ErrDecode))

	t.Steps[0].BehaviorLogProb = 0.5
	_, err = schemas.EncodeTrajectory(t)
	fmt.Println(err)
	// Output:
	// demo.onpolicy.actor-0.1 2 put mug 1 in sink 1
	// true
	// schemas: invalid steps[0].behavior_log_prob: 0.5 is not a finite log-probability ≤ 0
}

func ExampleStateStats() {
	steps := []schemas.Step{{StateKey: 1}, {StateKey: 2}, {StateKey: 1}, {StateKey: 3}, {StateKey: 1}}
	distinct, repeated := schemas.StateStats(steps)
	fmt.Println(distinct, repeated)
	// Output: 3 2
}

func ExamplePatchLabels() {
	t := &schemas.Trajectory{
		ID: schemas.TrajectoryID("demo", schemas.SourceExplore, "explorer-0", 1), Run: "demo",
		Source: schemas.SourceExplore, Env: "household", TaskID: "household/train/1", OutcomeReward: 1, Success: true,
		Steps: []schemas.Step{
			{Observation: "You see a mug 1.", Action: "take mug 1", ActionIndex: -1, Reward: 0.4, DenseReward: 0.4, StateKey: 1},
			{Observation: "You hold the mug 1.", Action: "put mug 1 in sink 1", ActionIndex: -1, Reward: 0.9, DenseReward: 0.9, StateKey: 2},
		},
	}
	b, err := schemas.EncodeTrajectory(t)
	if err != nil {
		fmt.Println(err)
		return
	}
	// The outcome form of the rewards, as the swapper relabels them.
	r := t.Clone()
	r.Steps[0].Reward, r.Steps[1].Reward = 0, r.OutcomeReward
	r.Swapped = true
	r.DistinctStates, r.RepeatedVisits = schemas.StateStats(r.Steps)
	patched, err := schemas.PatchLabels(b, r)
	if err != nil {
		fmt.Println(err)
		return
	}
	encoded, _ := schemas.EncodeTrajectory(r)
	fmt.Println(bytes.Equal(patched, encoded))

	_, err = schemas.PatchLabels(b[:len(b)-1], r)
	fmt.Println(errors.Is(err, schemas.ErrNotPatchable))
	// Output:
	// true
	// true
}
