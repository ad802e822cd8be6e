package shop

import (
	"math/rand/v2"
	"slices"
	"strings"
)

// candidateQueries builds the goal's candidate search queries, since the
// agent chooses a query rather than typing one. The kinds, in the order n
// takes them: everything (attributes, type, option values); attributes and
// type; the type alone; type and option values; a distractor naming
// another type of the same category with the first attribute. Duplicates
// are dropped and the order is shuffled so position carries no hint. It
// returns the queries and the kind (position in that list) of each.
func candidateQueries(rng *rand.Rand, pt *productType, g *goal, n int) (queries []string, kinds []int) {
	var values []string
	for _, o := range g.options {
		values = append(values, o.value)
	}
	attrs := strings.Join(g.attrs, " ")
	opts := strings.Join(values, " ")
	all := []string{
		attrs + " " + pt.Name + " " + opts,
		attrs + " " + pt.Name,
		pt.Name,
		pt.Name + " " + opts,
		g.attrs[0] + " " + siblingType(rng, pt).Name,
	}
	for kind, q := range all[:n] {
		if !slices.Contains(queries, q) {
			queries, kinds = append(queries, q), append(kinds, kind)
		}
	}
	rng.Shuffle(len(queries), func(i, j int) {
		queries[i], queries[j] = queries[j], queries[i]
		kinds[i], kinds[j] = kinds[j], kinds[i]
	})
	return queries, kinds
}

// siblingType returns another product type of pt's category.
func siblingType(rng *rand.Rand, pt *productType) *productType {
	var sibs []*productType
	for i := range productTypes {
		if s := &productTypes[i]; s.Category == pt.Category && s.Name != pt.Name {
			sibs = append(sibs, s)
		}
	}
	return sibs[rng.IntN(len(sibs))]
}
