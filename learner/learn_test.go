package learner

import (
	"context"
	"fmt"
	"testing"

	"github.com/rspo-dev/rspo/envs"
	_ "github.com/rspo-dev/rspo/envs/household"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
)

// loop is an in-process training run: B tasks × N rollouts per update.
type loop struct {
	env     envs.Env
	train   []envs.Task
	eval    []envs.Task
	b, n    int
	trainer *Trainer
}

// batch rolls out the next B tasks N times each with the current policy.
func (l *loop) batch(t testing.TB, update int) []*schemas.Trajectory {
	t.Helper()
	var out []*schemas.Trajectory
	p := l.trainer.Policy()
	for k := range l.b {
		task := l.train[(update*l.b+k)%len(l.train)]
		for j := range l.n {
			tr, err := policy.Rollout(context.Background(), l.env, task, p, policy.RolloutOptions{
				Seed: int64(update)<<20 | int64(k)<<8 | int64(j), GroupID: fmt.Sprintf("u%d/%s", update, task.ID)})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, tr)
		}
	}
	return out
}

// success is the sampled success rate of p on the eval tasks.
func success(t testing.TB, env envs.Env, tasks []envs.Task, p *policy.Policy, greedy bool) float64 {
	t.Helper()
	won := 0
	for i, task := range tasks {
		tr, err := policy.Rollout(context.Background(), env, task, p, policy.RolloutOptions{Seed: int64(i) + 1e9, Greedy: greedy})
		if err != nil {
			t.Fatal(err)
		}
		if tr.Success {
			won++
		}
	}
	return float64(won) / float64(len(tasks))
}

// run trains for updates steps, logging the eval curve every `every`.
func (l *loop) run(t testing.TB, updates, every int) (curve []float64) {
	t.Helper()
	for u := range updates {
		if u%every == 0 {
			curve = append(curve, success(t, l.env, l.eval, l.trainer.Policy(), false))
		}
		st, err := l.trainer.Update(l.batch(t, u), nil)
		if err != nil {
			t.Fatal(err)
		}
		if u%every == 0 {
			t.Logf("update %3d eval %.2f train success %.2f all-fail %.2f entropy %.2f grad %.2f", u, curve[len(curve)-1], st.SuccessOn, st.AllFailFracOn, st.EntropyOn, st.GradNorm)
		}
	}
	return append(curve, success(t, l.env, l.eval, l.trainer.Policy(), false))
}

func TestLearnsCourier(t *testing.T) {
	env, train := courierTasks(t, 256, 1)
	eval, err := env.Tasks(envs.SplitEvalIn, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.New(policy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	random := success(t, env, eval, p, false)
	l := &loop{env: env, train: train, eval: eval, b: 8, n: 8, trainer: newTrainer(t, p, Config{})}
	curve := l.run(t, 30, 5)
	final := curve[len(curve)-1]
	t.Logf("random %.2f, curve %v", random, curve)
	if final < random+0.3 {
		t.Fatalf("got eval success %.2f after training, want well above random %.2f", final, random)
	}
}

// TestLearnsHousehold trains GRPO with in-process rollouts on the easy
// household preset and checks that held-out success rises clearly above
// the random policy's (about 5%).
func TestLearnsHousehold(t *testing.T) {
	if testing.Short() {
		t.Skip("trains for about a minute of CPU; skipped with -short")
	}
	env, err := envs.New("household", map[string]string{"preset": "easy"})
	if err != nil {
		t.Fatal(err)
	}
	train, err := env.Tasks(envs.SplitTrain, 16*30, 1)
	if err != nil {
		t.Fatal(err)
	}
	eval, err := env.Tasks(envs.SplitTrain, 100, -1001)
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.New(policy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	random := success(t, env, eval, p, false)
	l := &loop{env: env, train: train, eval: eval, b: 16, n: 8, trainer: newTrainer(t, p, Config{})}
	curve := l.run(t, 30, 10)
	final := curve[len(curve)-1]
	t.Logf("random %.2f, eval success every 10 updates %v", random, curve)
	if final < random+0.25 {
		t.Fatalf("got eval success %.2f after 30 updates, want at least random %.2f + 0.25", final, random)
	}
}
