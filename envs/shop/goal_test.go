package shop

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestEveryGoalGenerates checks every goal of the default and easy
// configurations: generated, reachable by a candidate query within the
// results, asking only what the target has, and stated in the instruction.
func TestEveryGoalGenerates(t *testing.T) {
	for _, preset := range []string{PresetStandard, PresetEasy} {
		t.Run(preset, func(t *testing.T) {
			env, err := New(Config{Preset: preset})
			if err != nil {
				t.Fatal(err)
			}
			n := env.cfg.Goals
			if testing.Short() {
				n = 1000
			}
			for i := range n {
				g, err := env.world.goal(i)
				if err != nil {
					t.Fatal(err)
				}
				if err := checkGoal(env, g); err != nil {
					t.Fatalf("goal %d: %v", i, err)
				}
			}
		})
	}
}

// checkGoal verifies one goal against its target.
func checkGoal(env *Env, g *goal) error {
	p := &env.world.cat.products[g.target]
	pt := &productTypes[p.ptype]
	switch {
	case len(g.attrs) < 1 || len(g.attrs) > env.cfg.GoalAttributes:
		return fmt.Errorf("got %d attributes, want 1..%d", len(g.attrs), env.cfg.GoalAttributes)
	case len(g.options) < 1 || len(g.options) > min(env.cfg.GoalOptions, len(pt.Options)):
		return fmt.Errorf("got %d options, want 1..%d", len(g.options), min(env.cfg.GoalOptions, len(pt.Options)))
	case g.priceLimit < p.price:
		return fmt.Errorf("price limit %.2f below the target's price %.2f", g.priceLimit, p.price)
	case len(g.queries) < 1 || len(g.queries) > env.cfg.Queries:
		return fmt.Errorf("got %d queries, want 1..%d", len(g.queries), env.cfg.Queries)
	case g.bestQuery < 0 || int(g.results[g.bestQuery][g.bestRank]) != g.target:
		return fmt.Errorf("best query %d rank %d does not list the target", g.bestQuery, g.bestRank)
	case !strings.Contains(g.instruction, pt.Name) || !strings.Contains(g.instruction, fmt.Sprintf("%.2f dollars", g.priceLimit)):
		return fmt.Errorf("instruction %q lacks the type or the price", g.instruction)
	}
	for _, a := range g.attrs {
		if !slices.Contains(p.attrs, a) || !strings.Contains(g.instruction, a) {
			return fmt.Errorf("attribute %q: target has %v, instruction %q", a, p.attrs, g.instruction)
		}
	}
	for _, o := range g.options {
		if !slices.Contains(p.options[o.dim], o.value) || !strings.Contains(g.instruction, o.value) {
			return fmt.Errorf("option %q: target offers %v, instruction %q", o.value, p.options[o.dim], g.instruction)
		}
	}
	return nil
}

func TestGoalsAreDeterministic(t *testing.T) {
	w := testWorld(t)
	for _, i := range []int{0, 499, 500, 6499} {
		fresh, err := newGoal(w, i)
		if err != nil {
			t.Fatal(err)
		}
		cached, err := w.goal(i)
		if err != nil {
			t.Fatal(err)
		}
		if fresh.instruction != cached.instruction || !slices.Equal(fresh.queries, cached.queries) || fresh.target != cached.target {
			t.Errorf("goal %d: regenerated %q, want %q", i, fresh.instruction, cached.instruction)
		}
	}
}

// TestGoalsAskForTellingAttributes: when a target has an attribute some
// near-duplicate lacks, the instruction asks for at least one such.
func TestGoalsAskForTellingAttributes(t *testing.T) {
	w := testWorld(t)
	for i := range 500 {
		g, _ := w.goal(i)
		p := &w.cat.products[g.target]
		telling := func(a string) bool { return w.familyLacks(p, a) }
		if slices.ContainsFunc(p.attrs, telling) && !slices.ContainsFunc(g.attrs, telling) {
			t.Errorf("goal %d asks %v, none of which a near-duplicate lacks", i, g.attrs)
		}
	}
}

func TestPriceLimit(t *testing.T) {
	tests := []struct {
		name string
		x    float64
		want float64
	}{
		{"rounds up to 5", 41.2, 45},
		{"exact multiple stays", 40, 40},
		{"small", 3.5, 5},
		{"above 100 rounds to 25", 101, 125},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := priceLimit(tt.x); got != tt.want {
				t.Errorf("priceLimit(%v) = %v, want %v", tt.x, got, tt.want)
			}
		})
	}
}

func TestInstructionGrammar(t *testing.T) {
	w := testWorld(t)
	bad := regexp.MustCompile(`  | ,|\ba [aeio]|\ban [^aeio]|\ba \w+s (in|with|for) `)
	for i := range 500 {
		g, _ := w.goal(i)
		if m := bad.FindString(g.instruction); m != "" {
			t.Errorf("goal %d: instruction %q contains %q", i, g.instruction, m)
		}
	}
}

func TestLocateTarget(t *testing.T) {
	const target = 7
	page := func(rank int) []int32 { // a results list with the target at rank
		res := make([]int32, ResultsLimit)
		for i := range res {
			res[i] = int32(100 + i)
		}
		if rank >= 0 {
			res[rank] = target
		}
		return res
	}
	tests := []struct {
		name      string
		ranks     []int // target rank per query, -1 when absent
		kinds     []int
		wantQuery int
		wantRank  int
	}{
		{"earliest page wins", []int{25, 12}, []int{0, 4}, 1, 12},
		{"same page: more complete kind wins", []int{8, 2}, []int{0, 4}, 0, 8},
		{"same page, kinds reversed", []int{8, 2}, []int{3, 1}, 1, 2},
		{"absent from one query", []int{-1, 40}, []int{0, 1}, 1, 40},
		{"absent everywhere", []int{-1, -1}, []int{0, 1}, -1, ResultsLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &goal{target: target, queryKinds: tt.kinds}
			for _, r := range tt.ranks {
				g.results = append(g.results, page(r))
			}
			found := g.locateTarget()
			if found != (tt.wantQuery >= 0) || g.bestQuery != tt.wantQuery || g.bestRank != tt.wantRank {
				t.Errorf("got found %v, query %d, rank %d; want query %d, rank %d", found, g.bestQuery, g.bestRank, tt.wantQuery, tt.wantRank)
			}
		})
	}
}

// TestChoosingRightTakesCare measures what a greedy shopper gets: search
// with the most complete query, then buy a page-1 item with the requested
// options. Near-duplicates must make a blind pick fail often.
func TestChoosingRightTakesCare(t *testing.T) {
	w := testWorld(t)
	top, items, good := 0, 0, 0
	for i := range EvalGoals {
		g, err := w.goal(i)
		if err != nil {
			t.Fatal(err)
		}
		full := slices.Index(g.queryKinds, 0)
		for rank, d := range g.results[full][:PageSize] {
			ok := greedyBuy(w, g, int(d)).Success()
			items++
			if ok {
				good++
				if rank == 0 {
					top++
				}
			}
		}
	}
	share := float64(good) / float64(items)
	t.Logf("full query: top result succeeds for %d of %d goals; %.3f of page-1 items succeed", top, EvalGoals, share)
	if share > 0.5 || top > EvalGoals*3/5 {
		t.Errorf("a blind pick succeeds too often: %.3f of page-1 items, top result %d of %d", share, top, EvalGoals)
	}
}

// greedyBuy scores buying product d with every requested option value it
// offers selected.
func greedyBuy(w *world, g *goal, d int) RewardBreakdown {
	p, target := &w.cat.products[d], &w.cat.products[g.target]
	sel := make([]int, len(p.options))
	for i := range sel {
		sel[i] = -1
	}
	if p.ptype == target.ptype {
		for _, o := range g.options {
			sel[o.dim] = slices.Index(p.options[o.dim], o.value)
		}
	}
	return reward(p, target, sel, g)
}
