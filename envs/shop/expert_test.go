package shop

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/rollout"
)

// TestExpertSolvesEverySplit: the expert solves every goal of every split
// (all 6,500 in the default and easy presets), which proves each task is
// solvable within the step limit.
func TestExpertSolvesEverySplit(t *testing.T) {
	for _, preset := range []string{PresetStandard, PresetEasy} {
		env, err := New(Config{Preset: preset})
		if err != nil {
			t.Fatal(err)
		}
		expert, err := envs.NewExpertAgent(env)
		if err != nil {
			t.Fatal(err)
		}
		for _, split := range env.Splits() {
			t.Run(preset+"/"+split, func(t *testing.T) {
				n := 0
				if testing.Short() {
					n = 200
				}
				tasks, err := env.Tasks(split, n, 1)
				if err != nil {
					t.Fatal(err)
				}
				rep, err := rollout.Evaluate(context.Background(), env, tasks, expert, rollout.EvalOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if got := rep.Overall; got.SuccessRate != 1 || got.MeanScore != 1 || got.InadmissibleRate != 0 {
					t.Errorf("expert on %d tasks: success %.4f, score %.4f, inadmissible %.4f; want 1, 1, 0",
						got.Episodes, got.SuccessRate, got.MeanScore, got.InadmissibleRate)
				}
				t.Logf("%s %s: %d tasks, expert success %.3f, mean steps %.2f", preset, split, rep.Overall.Episodes, rep.Overall.SuccessRate, rep.Overall.MeanSteps)
			})
		}
	}
}

// TestExpertRecovers: after a random detour the expert still finds and buys
// the target (given enough steps).
func TestExpertRecovers(t *testing.T) {
	env, err := New(Config{MaxSteps: 100})
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := env.Tasks(envs.SplitTrain, 100, 3)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, task := range tasks {
		ep, err := env.Reset(task)
		if err != nil {
			t.Fatal(err)
		}
		for range rng.IntN(8) {
			acts := ep.Admissible()
			if a := acts[rng.IntN(len(acts))]; a != actBuy {
				if _, err := ep.Step(a); err != nil {
					t.Fatal(err)
				}
			}
		}
		for !ep.Done() {
			a, err := env.ExpertAction(ep)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ep.Step(a); err != nil {
				t.Fatal(err)
			}
		}
		if !ep.Success() {
			t.Errorf("task %s: expert did not recover (outcome %v after %d steps)", task.ID, ep.Outcome(), ep.Steps())
		}
	}
}

// foreignEpisode is an episode of some other environment.
type foreignEpisode struct{ envs.Episode }

func TestExpertErrors(t *testing.T) {
	env, ep := startEpisode(t, Config{}, 0)
	if _, err := env.ExpertAction(foreignEpisode{}); !errors.Is(err, ErrForeignEpisode) {
		t.Errorf("foreign episode: got %v, want ErrForeignEpisode", err)
	}
	other, err := New(Config{Preset: PresetEasy})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.ExpertAction(ep); !errors.Is(err, ErrForeignEpisode) {
		t.Errorf("episode of another configuration: got %v, want ErrForeignEpisode", err)
	}
	for !ep.Done() {
		a, _ := env.ExpertAction(ep)
		mustStep(t, ep, a)
	}
	if _, err := env.ExpertAction(ep); !errors.Is(err, envs.ErrEpisodeDone) {
		t.Errorf("finished episode: got %v, want ErrEpisodeDone", err)
	}
}
