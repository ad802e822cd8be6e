package household

import (
	"math/rand/v2"
	"testing"

	"github.com/rspo-dev/rspo/envs"
)

// BenchmarkStep measures environment steps per second on one goroutine with
// a uniformly random policy: the step, the admissible list of the next
// state, and the resets of finished episodes.
func BenchmarkStep(b *testing.B) {
	for _, preset := range Presets() {
		b.Run(preset, func(b *testing.B) {
			env, _ := New(presets[preset])
			tasks, _ := env.Tasks(envs.SplitTrain, 1000, 1)
			rng := rand.New(rand.NewPCG(1, 1))
			ep, _ := env.Reset(tasks[0])
			next := 1
			b.ReportAllocs()
			for b.Loop() {
				if ep.Done() {
					ep, _ = env.Reset(tasks[next%len(tasks)])
					next++
				}
				acts := ep.Admissible()
				if _, err := ep.Step(acts[rng.IntN(len(acts))]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
		})
	}
}

// BenchmarkReset measures building a home and its first admissible list.
func BenchmarkReset(b *testing.B) {
	env, _ := New(DefaultConfig())
	tasks, _ := env.Tasks(envs.SplitTrain, 1000, 1)
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		if _, err := env.Reset(tasks[i%len(tasks)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "resets/s")
}

// BenchmarkExpert measures whole expert episodes on the fixed splits.
func BenchmarkExpert(b *testing.B) {
	env, _ := New(DefaultConfig())
	tasks, _ := env.Tasks(envs.SplitEvalIn, 0, 0)
	i, steps := 0, 0
	for b.Loop() {
		ep, _ := env.Reset(tasks[i%len(tasks)])
		for !ep.Done() {
			a, err := env.ExpertAction(ep)
			if err != nil {
				b.Fatal(err)
			}
			ep.Step(a)
		}
		steps += ep.Steps()
		i++
	}
	b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
}
