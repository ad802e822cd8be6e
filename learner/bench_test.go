package learner

import (
	"runtime"
	"testing"

	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
)

// benchUpdate measures one update of B = 16 tasks × N = 8 rollouts on one
// core (run with -cpu 1) with the default policy and the given config.
func benchUpdate(b *testing.B, batch []*schemas.Trajectory, cfg Config) {
	b.Helper()
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	p, err := policy.New(policy.Config{})
	if err != nil {
		b.Fatal(err)
	}
	tr := newTrainer(b, p, cfg)
	steps := 0
	for _, t := range batch {
		steps += len(t.Steps)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := tr.Update(batch, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/update")
	b.ReportMetric(float64(steps), "steps/batch")
}

func BenchmarkUpdate(b *testing.B) {
	env, tasks := courierTasks(b, 16, 1)
	p, _ := policy.New(policy.Config{})
	batch := collect(b, env, tasks, p, 8, 1, schemas.SourceOnPolicy)
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"courier/grpo", Config{}},
		{"courier/ppo", Config{Algo: PPO}},
		{"courier/grpo-4epochs", Config{Epochs: 4}},
	} {
		b.Run(c.name, func(b *testing.B) { benchUpdate(b, batch, c.cfg) })
	}
}
