package rollout_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/rollout"
)

// coin is a one-step environment: saying "win" solves the task. Tasks of
// type "hard" need two "win"s in a row.
type coin struct{}

func (coin) Name() string        { return "coin" }
func (coin) Splits() []string    { return []string{envs.SplitTrain} }
func (coin) TaskTypes() []string { return []string{"easy", "hard"} }

func (coin) Tasks(string, int, int64) ([]envs.Task, error) { return nil, nil }

func (coin) Reset(t envs.Task) (envs.Episode, error) {
	if t.ID == "broken" {
		return nil, errors.New("coin: broken task")
	}
	need := 1
	if t.Type == "hard" {
		need = 2
	}
	return &coinEp{task: t, need: need}, nil
}

type expertCoin struct{ coin }

func (expertCoin) ExpertAction(envs.Episode) (string, error) { return "win", nil }

type coinEp struct {
	task        envs.Task
	need, wins  int
	steps       int
	done, solve bool
}

func (e *coinEp) Task() envs.Task      { return e.task }
func (e *coinEp) Observation() string  { return "flip" }
func (e *coinEp) Admissible() []string { return []string{"win", "lose"} }
func (e *coinEp) Done() bool           { return e.done }
func (e *coinEp) Success() bool        { return e.solve }
func (e *coinEp) Steps() int           { return e.steps }
func (e *coinEp) StateKey() uint64     { return uint64(e.wins) }

func (e *coinEp) Outcome() float64 {
	if e.solve {
		return 1
	}
	return 0
}

func (e *coinEp) Step(a string) (envs.StepResult, error) {
	if e.done {
		return envs.StepResult{}, envs.ErrEpisodeDone
	}
	e.steps++
	switch a {
	case "win":
		e.wins++
		e.solve = e.wins == e.need
		e.done = e.solve
	case "lose":
		e.done = true
	default:
		return envs.StepResult{Observation: "Nothing happens."}, nil
	}
	return envs.StepResult{Observation: "flip", Done: e.done, Reward: e.Outcome(), Admissible: true}, nil
}

type failingAgent struct{}

func (failingAgent) Act(envs.Episode, *rand.Rand) (string, error) { return "", errors.New("no idea") }

type nonsenseAgent struct{ n int }

func (a *nonsenseAgent) Act(envs.Episode, *rand.Rand) (string, error) {
	if a.n++; a.n%2 == 1 {
		return "dance", nil
	}
	return "win", nil
}

var coinTasks = []envs.Task{
	{ID: "e1", Type: "easy"}, {ID: "h1", Type: "hard"}, {ID: "e2", Type: "easy"},
}

func TestEvaluateExpert(t *testing.T) {
	env := expertCoin{}
	agent, err := envs.NewExpertAgent(env)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := rollout.Evaluate(context.Background(), env, coinTasks, agent, rollout.EvalOptions{Episodes: 6})
	if err != nil {
		t.Fatal(err)
	}
	want := rollout.Report{
		Env:     "coin",
		Overall: stats(6, 6, 1, 8.0/6, 0),
		ByType:  map[string]rollout.Stats{"easy": stats(4, 4, 1, 1, 0), "hard": stats(2, 2, 1, 2, 0)},
		Types:   []string{"easy", "hard"},
	}
	if !sameReport(rep, want) {
		t.Errorf("got %+v, want %+v", rep, want)
	}
}

// stats builds expected Stats (the unexported accumulators are ignored by sameReport).
func stats(n, succ int, score, steps, inadmissible float64) rollout.Stats {
	return rollout.Stats{Episodes: n, Successes: succ, SuccessRate: float64(succ) / float64(n),
		MeanScore: score, MeanSteps: steps, InadmissibleRate: inadmissible}
}

func sameReport(a, b rollout.Report) bool {
	if a.Env != b.Env || !reflect.DeepEqual(a.Types, b.Types) || len(a.ByType) != len(b.ByType) {
		return false
	}
	if !sameStats(a.Overall, b.Overall) {
		return false
	}
	for k, v := range b.ByType {
		if !sameStats(a.ByType[k], v) {
			return false
		}
	}
	return true
}

func sameStats(a, b rollout.Stats) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-12 }
	return a.Episodes == b.Episodes && a.Successes == b.Successes && near(a.SuccessRate, b.SuccessRate) &&
		near(a.MeanScore, b.MeanScore) && near(a.MeanSteps, b.MeanSteps) && near(a.InadmissibleRate, b.InadmissibleRate)
}

func TestEvaluateRandomIsReproducible(t *testing.T) {
	opts := rollout.EvalOptions{Episodes: 4000, Seed: 9}
	a, err := rollout.Evaluate(context.Background(), coin{}, coinTasks, envs.RandomAgent{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := rollout.Evaluate(context.Background(), coin{}, coinTasks, envs.RandomAgent{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !sameReport(a, b) {
		t.Fatalf("same seed, different reports: %+v vs %+v", a, b)
	}
	// easy: P(win) = 1/2; hard: 1/4.
	for typ, want := range map[string]float64{"easy": 0.5, "hard": 0.25} {
		if got := a.ByType[typ].SuccessRate; math.Abs(got-want) > 0.05 {
			t.Errorf("%s: random success %.3f, want about %.2f", typ, got, want)
		}
	}
}

func TestEvaluateCountsInadmissible(t *testing.T) {
	rep, err := rollout.Evaluate(context.Background(), coin{}, coinTasks[:1], &nonsenseAgent{}, rollout.EvalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rep.Overall, stats(1, 1, 1, 2, 0.5); !sameStats(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestEvaluateErrors(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name  string
		ctx   context.Context
		env   envs.Env
		tasks []envs.Task
		agent envs.Agent
		opts  rollout.EvalOptions
		want  error
	}{
		{"no tasks", context.Background(), coin{}, nil, envs.RandomAgent{}, rollout.EvalOptions{}, nil},
		{"negative episodes", context.Background(), coin{}, coinTasks, envs.RandomAgent{}, rollout.EvalOptions{Episodes: -1}, nil},
		{"canceled", canceled, coin{}, coinTasks, envs.RandomAgent{}, rollout.EvalOptions{}, context.Canceled},
		{"agent fails", context.Background(), coin{}, coinTasks, failingAgent{}, rollout.EvalOptions{}, nil},
		{"reset fails", context.Background(), coin{}, []envs.Task{{ID: "broken"}}, envs.RandomAgent{}, rollout.EvalOptions{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := rollout.Evaluate(tt.ctx, tt.env, tt.tasks, tt.agent, tt.opts)
			if err == nil {
				t.Fatal("got nil error, want one")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
}

func TestNewExpertAgentWithoutPlanner(t *testing.T) {
	if _, err := envs.NewExpertAgent(coin{}); !errors.Is(err, envs.ErrNoPlanner) {
		t.Errorf("got %v, want ErrNoPlanner", err)
	}
}

// gradedCoin's episodes pay their success (Outcome) and report a graded
// Score beside it, as the shop does under reward=success: a lost toss
// still scores its wins so far, a quarter each, plus a quarter.
type gradedCoin struct{ coin }

type gradedCoinEp struct{ *coinEp }

func (g gradedCoinEp) Score() float64 {
	if g.solve {
		return 1
	}
	return 0.25 * float64(1+g.wins)
}

func (gradedCoin) Reset(t envs.Task) (envs.Episode, error) {
	ep, err := coin{}.Reset(t)
	if err != nil {
		return nil, err
	}
	return gradedCoinEp{ep.(*coinEp)}, nil
}

type loser struct{}

func (loser) Act(envs.Episode, *rand.Rand) (string, error) { return "lose", nil }

// TestEvaluateReportsTheGradedScore: an episode with a graded score
// (envs.Scorer) reports it as its score, not its outcome reward.
func TestEvaluateReportsTheGradedScore(t *testing.T) {
	rep, err := rollout.Evaluate(context.Background(), gradedCoin{}, coinTasks, loser{}, rollout.EvalOptions{Episodes: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Overall; got.Successes != 0 || got.MeanScore != 0.25 {
		t.Errorf("lost every toss: %d successes, mean score %v; want 0 and the graded 0.25 (the outcome is 0)", got.Successes, got.MeanScore)
	}
}
