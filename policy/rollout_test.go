package policy_test

import (
	"context"
	"errors"
	"math"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/envs"
	_ "github.com/rspo-dev/rspo/envs/household"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/policy/policytest"
	"github.com/rspo-dev/rspo/schemas"
)

var fixedClock = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

func courierTask(t testing.TB, i int) (envs.Env, envs.Task) {
	t.Helper()
	env := policytest.Courier{}
	tasks, err := env.Tasks(envs.SplitTrain, i+1, 1)
	if err != nil {
		t.Fatal(err)
	}
	return env, tasks[i]
}

func randomPolicy(t testing.TB) *policy.Policy {
	t.Helper()
	p, err := policy.New(policy.Config{Buckets: 4096})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRolloutFillsEveryField(t *testing.T) {
	env, task := courierTask(t, 3)
	p := randomPolicy(t)
	tr, err := policy.Rollout(context.Background(), env, task, p, policy.RolloutOptions{
		Seed: 5, Run: "r1", Producer: "actor-1", GroupID: "g1", Seq: 7, Clock: fixedClock})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Env != "courier" || tr.TaskID != task.ID || tr.Instruction != task.Instruction || tr.TaskSeed != task.Seed ||
		tr.Source != schemas.SourceOnPolicy || tr.GroupID != "g1" || tr.Run != "r1" || tr.Seq != 7 || tr.ID == "" {
		t.Fatalf("trajectory header not filled: %+v", tr)
	}
	if len(tr.Steps) == 0 {
		t.Fatal("no steps")
	}
	sum := 0.0
	for i, st := range tr.Steps {
		n := len(st.Admissible)
		if n == 0 || int(st.NumAdmissible) != n || st.Admissible[st.ActionIndex] != st.Action || st.Observation == "" || st.StateKey == 0 {
			t.Fatalf("step %d not filled: %+v", i, st)
		}
		if want := -math.Log(float64(n)); math.Abs(st.BehaviorLogProb-want) > 1e-12 {
			t.Fatalf("step %d: got log-prob %v, want %v (uniform policy)", i, st.BehaviorLogProb, want)
		}
		sum += st.Reward
	}
	if sum != tr.OutcomeReward {
		t.Fatalf("got rewards summing to %v, want the outcome %v", sum, tr.OutcomeReward)
	}
}

func TestRolloutDeterministic(t *testing.T) {
	env, task := courierTask(t, 2)
	p := randomPolicy(t)
	run := func(seed int64) *schemas.Trajectory {
		tr, err := policy.Rollout(context.Background(), env, task, p, policy.RolloutOptions{Seed: seed, Clock: fixedClock})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	a, b, c := run(1), run(1), run(2)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("equal seeds gave different trajectories")
	}
	if reflect.DeepEqual(a.Steps, c.Steps) {
		t.Fatal("different seeds gave the same trajectory (possible, but not for this task)")
	}
}

// TestStatesFromTrajectoryReproduceLogProbs is the learner's contract: the
// stored steps rebuild states on which the policy gives exactly the
// behaviour log-probs recorded during the rollout.
func TestStatesFromTrajectoryReproduceLogProbs(t *testing.T) {
	env, task := courierTask(t, 4)
	p := randomPolicy(t)
	trained, err := policy.Load(mustSnapshot(t, p))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := policy.Rollout(context.Background(), env, task, trained, policy.RolloutOptions{Seed: 9, Temperature: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	states, err := policy.StatesFromTrajectory(tr)
	if err != nil {
		t.Fatal(err)
	}
	feats, err := trained.NewFeaturizer().Episode(states)
	if err != nil {
		t.Fatal(err)
	}
	hot, _ := trained.WithTemperature(0.5)
	var ps policy.Pass
	for i, f := range feats {
		hot.Forward(f, &ps)
		if got, want := ps.LogProbs[tr.Steps[i].ActionIndex], tr.Steps[i].BehaviorLogProb; got != want {
			t.Fatalf("step %d: got log-prob %v, want %v", i, got, want)
		}
	}
}

func mustSnapshot(t *testing.T, p *policy.Policy) []byte {
	b, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestStatesFromTrajectoryErrors(t *testing.T) {
	good := schemas.Step{Admissible: []string{"a", "b"}, Action: "b", ActionIndex: 1}
	tests := []struct {
		name string
		step schemas.Step
	}{
		{name: "no admissible", step: schemas.Step{Action: "a"}},
		{name: "index out of range", step: schemas.Step{Admissible: []string{"a"}, Action: "a", ActionIndex: 1}},
		{name: "unknown index", step: schemas.Step{Admissible: []string{"a"}, Action: "a", ActionIndex: -1}},
		{name: "index points elsewhere", step: schemas.Step{Admissible: []string{"a", "b"}, Action: "a", ActionIndex: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &schemas.Trajectory{ID: "t", Steps: []schemas.Step{good, tt.step}}
			_, err := policy.StatesFromTrajectory(tr)
			var te *policy.TrajectoryError
			if !errors.As(err, &te) || te.Step != 1 || !errors.Is(err, policy.ErrTrajectory) {
				t.Fatalf("got %v, want a TrajectoryError at step 1", err)
			}
		})
	}
}

func TestRolloutStopsOnCancel(t *testing.T) {
	env, task := courierTask(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := policy.Rollout(ctx, env, task, randomPolicy(t), policy.RolloutOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestRolloutStepCap(t *testing.T) {
	env, task := courierTask(t, 0)
	_, err := policy.Rollout(context.Background(), env, task, randomPolicy(t), policy.RolloutOptions{MaxSteps: 2, Seed: 1})
	if !errors.Is(err, policy.ErrEpisodeTooLong) {
		t.Fatalf("got %v, want ErrEpisodeTooLong", err)
	}
}

// BenchmarkRollout reports rollout speed (environment, features, forward
// pass, sampling) with a fresh default policy on one core.
func BenchmarkRollout(b *testing.B) {
	b.Run("courier", func(b *testing.B) { benchRollout(b, policytest.Courier{}) })
	for _, preset := range []string{"easy", "alfworld"} {
		env, err := envs.New("household", map[string]string{"preset": preset})
		if err != nil {
			b.Fatal(err)
		}
		b.Run("household-"+preset, func(b *testing.B) { benchRollout(b, env) })
	}
}

// BenchmarkRolloutTrained is BenchmarkRollout's default preset with a
// policy moved off its initialisation by a few updates: its output
// weights are no longer zero, so episodes and scores look like training's.
func BenchmarkRolloutTrained(b *testing.B) {
	env, err := envs.New("household", map[string]string{"preset": "alfworld"})
	if err != nil {
		b.Fatal(err)
	}
	p, _ := policy.New(policy.Config{})
	tasks, _ := env.Tasks(envs.SplitTrain, 8, 2)
	benchTrain(b, p, collectBench(b, env, tasks, p, 2), 3)
	b.ResetTimer()
	benchRolloutOf(b, env, p)
}

// BenchmarkPolicyStep reports the policy's share of a rollout step without
// the environment: featurising a recorded state and the forward pass.
func BenchmarkPolicyStep(b *testing.B) {
	env, err := envs.New("household", map[string]string{"preset": "alfworld"})
	if err != nil {
		b.Fatal(err)
	}
	p, _ := policy.New(policy.Config{})
	tasks, _ := env.Tasks(envs.SplitTrain, 8, 2)
	ts := collectBench(b, env, tasks, p, 2)
	benchTrain(b, p, ts, 3)
	var states [][]policy.State
	for _, t := range ts {
		s, err := policy.StatesFromTrajectory(t)
		if err != nil {
			b.Fatal(err)
		}
		states = append(states, s)
	}
	fz := p.NewFeaturizer()
	var ps policy.Pass
	steps := 0
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := range b.N {
		for k, s := range states[i%len(states)] {
			var f *policy.Features
			if k == 0 {
				f, err = fz.Features(&s)
			} else {
				f, err = fz.Next(&s)
			}
			if err != nil {
				b.Fatal(err)
			}
			p.Forward(f, &ps)
			steps++
		}
	}
	b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
	b.ReportMetric(float64(steps)/(cpuTime()-cpu0).Seconds(), "steps/cpu-s")
}

// collectBench rolls out n episodes of each task with p.
func collectBench(b *testing.B, env envs.Env, tasks []envs.Task, p *policy.Policy, n int) []*schemas.Trajectory {
	var out []*schemas.Trajectory
	for i, task := range tasks {
		for j := range n {
			tr, err := policy.Rollout(context.Background(), env, task, p, policy.RolloutOptions{Seed: int64(i*100 + j)})
			if err != nil {
				b.Fatal(err)
			}
			out = append(out, tr)
		}
	}
	return out
}

// benchTrain takes Adam steps on the log-likelihood of ts's actions,
// pushing a third of the trajectories up and a third down.
func benchTrain(b *testing.B, p *policy.Policy, ts []*schemas.Trajectory, steps int) {
	opt, _ := policy.NewAdam(p, policy.AdamConfig{LR: 0.05})
	g := p.NewGrads()
	var ps policy.Pass
	for range steps {
		g.Zero()
		for i, t := range ts {
			states, err := policy.StatesFromTrajectory(t)
			if err != nil {
				b.Fatal(err)
			}
			feats, err := p.NewFeaturizer().Episode(states)
			if err != nil {
				b.Fatal(err)
			}
			for j, f := range feats {
				p.Forward(f, &ps)
				d := make([]float64, len(ps.LogProbs))
				policy.AddLogProbGrad(d, ps.LogProbs, int(t.Steps[j].ActionIndex), float64(i%3)-1)
				if err := p.Backward(&ps, d, 0, g); err != nil {
					b.Fatal(err)
				}
			}
		}
		g.ClipNorm(1)
		if err := opt.Step(p, g); err != nil {
			b.Fatal(err)
		}
	}
}

func benchRollout(b *testing.B, env envs.Env) {
	p, _ := policy.New(policy.Config{})
	benchRolloutOf(b, env, p)
}

func benchRolloutOf(b *testing.B, env envs.Env, p *policy.Policy) {
	tasks, _ := env.Tasks(envs.SplitTrain, 64, 1)
	steps := 0
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := range b.N {
		tr, err := policy.Rollout(context.Background(), env, tasks[i%len(tasks)], p, policy.RolloutOptions{Seed: int64(i)})
		if err != nil {
			b.Fatal(err)
		}
		steps += len(tr.Steps)
	}
	b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
	b.ReportMetric(float64(steps)/(cpuTime()-cpu0).Seconds(), "steps/cpu-s")
}

// BenchmarkClone: explorers start as a copy of π_θ.
func BenchmarkClone(b *testing.B) {
	p, _ := policy.New(policy.Config{})
	for range b.N {
		_ = p.Clone()
	}
	b.ReportMetric(float64(p.NumParams()), "params")
}

// cpuTime is the process's user+system CPU time: the robust speed figure
// on a shared machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
