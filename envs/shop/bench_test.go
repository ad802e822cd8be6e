package shop

import (
	"math/rand/v2"
	"testing"

	"github.com/rspo-dev/rspo/envs"
)

// benchTasks returns the eval tasks with every goal generated.
func benchTasks(b *testing.B) (*Env, []envs.Task) {
	env, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	tasks, err := env.Tasks(envs.SplitEval, 0, 0)
	if err != nil {
		b.Fatal(err)
	}
	return env, tasks
}

// BenchmarkStepRandom measures environment steps per second on one core
// under the uniformly random policy, resets included.
func BenchmarkStepRandom(b *testing.B) {
	env, tasks := benchTasks(b)
	rng := rand.New(rand.NewPCG(1, 2))
	var ep envs.Episode
	episodes := 0
	for b.Loop() {
		if ep == nil || ep.Done() {
			ep, _ = env.Reset(tasks[episodes%len(tasks)])
			episodes++
		}
		acts := ep.Admissible()
		if _, err := ep.Step(acts[rng.IntN(len(acts))]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}

// BenchmarkStepExpert measures steps per second of expert episodes,
// planning and resets included.
func BenchmarkStepExpert(b *testing.B) {
	env, tasks := benchTasks(b)
	var ep envs.Episode
	episodes := 0
	for b.Loop() {
		if ep == nil || ep.Done() {
			ep, _ = env.Reset(tasks[episodes%len(tasks)])
			episodes++
		}
		a, err := env.ExpertAction(ep)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ep.Step(a); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}

// BenchmarkSearch measures one BM25 search over the default catalogue
// (done once per goal and query, then cached with the goal).
func BenchmarkSearch(b *testing.B) {
	env, _ := benchTasks(b)
	g, err := env.world.goal(0)
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		env.world.index.search(g.queries[i%len(g.queries)], ResultsLimit)
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "searches/s")
}

// BenchmarkBuildWorld measures generating the default catalogue and index.
func BenchmarkBuildWorld(b *testing.B) {
	cfg := Config{}.withDefaults()
	for b.Loop() {
		newWorld(cfg)
	}
}
