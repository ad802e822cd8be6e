package llm

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rspo-dev/rspo/envs"
	_ "github.com/rspo-dev/rspo/envs/household"
	"github.com/rspo-dev/rspo/prm/trajfile"
	"github.com/rspo-dev/rspo/schemas"
)

var update = flag.Bool("update", false, "rewrite the golden files, the recorded trajectories and the fuzz seed corpus under testdata/")

// householdFile holds recorded household trajectories (easy preset, a
// noisy expert), admissible lists included.
const householdFile = "testdata/household-easy.traj"

// householdTrajectories reads the recorded trajectories; under -update it
// plays and records them first.
func householdTrajectories(t testing.TB) []*schemas.Trajectory {
	t.Helper()
	if *update {
		recordHousehold(t)
	}
	trajs, err := trajfile.Read(householdFile)
	if err != nil {
		t.Fatalf("%v (run go test -update to record them)", err)
	}
	return trajs
}

// recordHousehold plays 3 episodes of each of 40 tasks with a noisy
// expert: at each step it takes the expert's action with probability
// 1−ε, else a random admissible one, ε ∈ {0.5, 0.8, 0.95} by episode, and
// an episode unfinished after 20 steps fails, so both outcomes are common.
func recordHousehold(t testing.TB) {
	env, err := envs.New("household", map[string]string{"preset": "easy"})
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := env.Tasks(envs.SplitTrain, 40, 7)
	if err != nil {
		t.Fatal(err)
	}
	planner := env.(envs.Planner)
	limit := min(20, env.(envs.StepLimiter).MaxSteps())
	rng := rand.New(rand.NewPCG(7, 11))
	var trajs []*schemas.Trajectory
	for i, task := range tasks {
		for k, eps := range []float64{0.5, 0.8, 0.95} {
			seq := uint64(i*3 + k)
			ep, err := env.Reset(task)
			if err != nil {
				t.Fatal(err)
			}
			tr := &schemas.Trajectory{ID: schemas.TrajectoryID("fixture", schemas.SourceOnPolicy, "household", seq),
				Run: "fixture", Source: schemas.SourceOnPolicy, Env: env.Name(), TaskID: task.ID, TaskType: task.Type,
				TaskSeed: task.Seed, Split: task.Split, Instruction: task.Instruction, Seq: seq,
				GroupID: fmt.Sprintf("fixture/g%d", i)}
			for !ep.Done() && len(tr.Steps) < limit {
				adm := append([]string(nil), ep.Admissible()...)
				obs, key := ep.Observation(), ep.StateKey()
				act, err := planner.ExpertAction(ep)
				if err != nil {
					t.Fatal(err)
				}
				if rng.Float64() < eps {
					act = adm[rng.IntN(len(adm))]
				}
				res, err := ep.Step(act)
				if err != nil {
					t.Fatal(err)
				}
				tr.Steps = append(tr.Steps, schemas.Step{Observation: obs, Admissible: adm, NumAdmissible: int32(len(adm)),
					Action: act, ActionIndex: int32(slices.Index(adm, act)), Reward: res.Reward, StateKey: key})
			}
			if ep.Done() {
				tr.OutcomeReward, tr.Success = ep.Outcome(), ep.Success()
			}
			trajs = append(trajs, tr)
		}
	}
	if err := os.MkdirAll(filepath.Dir(householdFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := trajfile.Write(householdFile, trajs); err != nil {
		t.Fatal(err)
	}
}

func TestHouseholdFixture(t *testing.T) {
	trajs := householdTrajectories(t)
	succ, steps := 0, 0
	for _, tr := range trajs {
		if tr.Success {
			succ++
		}
		steps += len(tr.Steps)
	}
	t.Logf("%d trajectories, %d successes, %d steps", len(trajs), succ, steps)
	if succ == 0 || succ == len(trajs) {
		t.Fatalf("the recorded trajectories need successes and failures: %d of %d succeed", succ, len(trajs))
	}
}
