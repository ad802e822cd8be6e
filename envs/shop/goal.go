package shop

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// errNoReachableGoal means no target could be found whose product appears
// in the results of a candidate query; it never happens with the shipped
// vocabulary (TestEveryGoalGenerates).
var errNoReachableGoal = errors.New("shop: no reachable goal")

// goal is one indexed instruction and everything an episode needs about it.
type goal struct {
	index      int
	target     int // product index
	attrs      []string
	options    []goalOption // at most one per option dimension, in dimension order
	priceLimit float64
	// instruction is the text shown to the agent.
	instruction string
	// queries are the candidate search queries, searchActions their
	// "search[…]" actions and results the ranked product indices each
	// query returns (at most ResultsLimit).
	queries       []string
	queryKinds    []int
	searchActions []string
	results       [][]int32
	// bestQuery is the query the expert uses: the one that lists the target
	// on the earliest results page, preferring the more complete kind of
	// query on a tie; bestRank is the target's 0-based rank there.
	bestQuery, bestRank int
}

// goalOption is one requested option value.
type goalOption struct {
	dim   int
	value string
}

// goalAttempts bounds the draws of a target before generation gives up.
const goalAttempts = 100

// newGoal generates goal index deterministically from the catalogue seed.
func newGoal(w *world, index int) (*goal, error) {
	rng := rand.New(rand.NewPCG(catalogueSeed^0x9a11, uint64(index)))
	for range goalAttempts {
		g := drawGoal(rng, w, index)
		if g.locateTarget() {
			return g, nil
		}
	}
	return nil, fmt.Errorf("%w for goal %d", errNoReachableGoal, index)
}

// drawGoal draws a target product and what the instruction asks of it, and
// runs the candidate searches.
func drawGoal(rng *rand.Rand, w *world, index int) *goal {
	target := &w.cat.products[rng.IntN(len(w.cat.products))]
	pt := &productTypes[target.ptype]
	g := &goal{index: index, target: target.index}
	g.attrs = chooseAttributes(rng, w, target)
	dims := rng.Perm(len(target.options))[:min(w.cfg.GoalOptions, len(target.options))]
	slices.Sort(dims)
	for _, d := range dims {
		g.options = append(g.options, goalOption{dim: d, value: pick(rng, target.options[d])})
	}
	g.priceLimit = priceLimit(target.price * (1.02 + 0.3*rng.Float64()))
	g.instruction = instruction(rng, pt, g)
	g.queries, g.queryKinds = candidateQueries(rng, pt, g, w.cfg.Queries)
	for _, q := range g.queries {
		g.searchActions = append(g.searchActions, "search["+q+"]")
		g.results = append(g.results, w.search(q))
	}
	return g
}

// chooseAttributes picks 1..GoalAttributes of the target's attributes. If
// none of them tells the target from a near-duplicate (some family member
// lacks it) but such an attribute exists, one is swapped in, so that the
// instruction requires care.
func chooseAttributes(rng *rand.Rand, w *world, target *product) []string {
	n := 1 + rng.IntN(min(w.cfg.GoalAttributes, len(target.attrs)))
	attrs := inOrder(target.attrs, sample(rng, target.attrs, n))
	var telling []string
	for _, a := range target.attrs {
		if w.familyLacks(target, a) {
			telling = append(telling, a)
		}
	}
	for _, a := range attrs {
		if slices.Contains(telling, a) {
			return attrs
		}
	}
	if len(telling) > 0 {
		attrs[rng.IntN(len(attrs))] = pick(rng, telling)
		attrs = inOrder(target.attrs, attrs)
	}
	return attrs
}

// priceLimit rounds x up to a round limit: a multiple of 5 below 100 and
// of 25 above.
func priceLimit(x float64) float64 {
	step := 5.0
	if x >= 100 {
		step = 25
	}
	return math.Ceil(x/step) * step
}

// locateTarget picks the expert's query (see bestQuery); it reports false
// when no query lists the target at all.
func (g *goal) locateTarget() bool {
	g.bestQuery, g.bestRank = -1, ResultsLimit
	for q, res := range g.results {
		rank := slices.Index(res, int32(g.target))
		if rank < 0 {
			continue
		}
		if g.bestQuery < 0 || rank/PageSize < g.bestRank/PageSize ||
			(rank/PageSize == g.bestRank/PageSize && g.queryKinds[q] < g.queryKinds[g.bestQuery]) {
			g.bestQuery, g.bestRank = q, rank
		}
	}
	return g.bestQuery >= 0
}

// instructionTemplates are WebShop-style phrasings; %[1]s is the article
// with a trailing space (or nothing), %[2]s the type, %[3]s the attributes,
// %[4]s the options and %[5]s the price limit.
var instructionTemplates = []string{
	"i need %[1]s%[3]s %[2]s %[4]s, and price lower than %[5]s dollars",
	"i am looking for %[1]s%[2]s that is %[3]s, %[4]s, and price lower than %[5]s dollars",
	"find me %[1]s%[3]s %[2]s %[4]s, with a price lower than %[5]s dollars",
	"i want to buy %[1]s%[2]s which is %[3]s, %[4]s, and price lower than %[5]s dollars",
}

// instruction renders the goal as text.
func instruction(rng *rand.Rand, pt *productType, g *goal) string {
	tmpl := rng.IntN(len(instructionTemplates))
	plural := strings.HasSuffix(pt.Name, "s") && !strings.HasSuffix(pt.Name, "ss")
	first := pt.Name
	if tmpl%2 == 0 {
		first = g.attrs[0]
	}
	art := article(first, plural)
	if art != "" {
		art += " "
	}
	opts := make([]string, len(g.options))
	for i, o := range g.options {
		opts[i] = fmt.Sprintf(pt.Options[o.dim].Phrase, o.value)
	}
	return fmt.Sprintf(instructionTemplates[tmpl], art, pt.Name, joinAnd(g.attrs), strings.Join(opts, ", "), fmt.Sprintf("%.2f", g.priceLimit))
}
