package rollout

import (
	"cmp"
	"math/rand/v2"
	"slices"

	"github.com/rspo-dev/rspo/envs"
)

// EvalSample picks n episodes' tasks from a split's tasks so that the
// sample's task-type mix matches the split's (largest-remainder shares, at
// least one episode per type while n allows) and, within a type, spreads
// over all of its tasks from an offset drawn from seed. The same seed gives
// the same sample, so a run's evaluations are comparable across updates.
// Playing the first n tasks instead measures an arbitrary subset with its
// own task mix.
func EvalSample(tasks []envs.Task, n int, seed int64) []envs.Task {
	if n <= 0 || len(tasks) == 0 {
		return nil
	}
	byType := map[string][]envs.Task{}
	var types []string
	for _, t := range tasks {
		if _, ok := byType[t.Type]; !ok {
			types = append(types, t.Type)
		}
		byType[t.Type] = append(byType[t.Type], t)
	}
	slices.Sort(types)
	counts := shares(types, byType, len(tasks), n)
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6576616c))
	out := make([]envs.Task, 0, n)
	for _, typ := range types {
		pool := byType[typ]
		offset := rng.IntN(len(pool))
		for i := range counts[typ] {
			// evenly spaced over the type's tasks, wrapping when n exceeds them
			out = append(out, pool[(offset+i*len(pool)/counts[typ])%len(pool)])
		}
	}
	return out
}

// shares splits n episodes over the types in proportion to their task
// counts (largest remainder); while n allows, a type left without an
// episode takes one from the type with the most.
func shares(types []string, byType map[string][]envs.Task, total, n int) map[string]int {
	counts := make(map[string]int, len(types))
	type rem struct {
		typ  string
		frac float64
	}
	rems := make([]rem, 0, len(types))
	given := 0
	for _, t := range types {
		exact := float64(n) * float64(len(byType[t])) / float64(total)
		counts[t] = int(exact)
		given += counts[t]
		rems = append(rems, rem{t, exact - float64(counts[t])})
	}
	slices.SortStableFunc(rems, func(a, b rem) int { return cmp.Compare(b.frac, a.frac) })
	for i := 0; given < n; i++ {
		counts[rems[i%len(rems)].typ]++
		given++
	}
	for _, t := range types {
		if counts[t] > 0 || n < len(types) {
			continue
		}
		most := slices.MaxFunc(types, func(a, b string) int { return cmp.Compare(counts[a], counts[b]) })
		counts[most]--
		counts[t]++
	}
	return counts
}
