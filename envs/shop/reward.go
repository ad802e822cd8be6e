package shop

import (
	"slices"
	"strings"
)

// RewardBreakdown is WebShop's reward for one purchase and its parts.
type RewardBreakdown struct {
	// TypeReward is r_type ∈ {0, 0.1, 0.5, 1}.
	TypeReward float64
	// QueryMatch: the bought product has the goal's product type
	// (WebShop: the product was scraped under the goal's query).
	QueryMatch bool
	// CategoryMatch: at least two levels of the category paths agree.
	CategoryMatch bool
	// TitleScore is the share of the target title's nouns found in the
	// bought product's title.
	TitleScore float64
	// Attributes, Options count the goal's attributes and options matched;
	// PriceOK is 1[price ≤ limit].
	Attributes, Options int
	PriceOK             bool
	// GoalAttributes, GoalOptions count what the goal asks for, and
	// OptionsOffered the goal's options the bought product offers,
	// selected or not: an option the product offers but the shopper did
	// not select was missed on the item page, one it does not offer was
	// lost when the product was chosen.
	GoalAttributes, GoalOptions, OptionsOffered int
	// Total is the reward r.
	Total float64
}

// Success reports whether the purchase earned the full reward.
func (b RewardBreakdown) Success() bool { return b.Total == 1 }

// reward scores buying p with the option values selected (selected[d] is an
// index into p.options[d], or -1) against goal g whose target is target:
//
//	r = r_type × (|matched attributes| + |matched options| + 1[price ≤ limit]) / (|attributes| + |options| + 1)
//
// exactly as WebShop's get_reward, with its get_type_reward rule:
// r_type = 1, lowered to 0.5 unless the query (product type) matches, or
// at least two category levels match, or the title score exceeds 0.2; then
// to 0.1 if the title score is below 0.1 and to 0 if it is 0. An attribute
// matches when the product has it or the phrase occurs in its title,
// features or description; an option matches when a selected value equals
// the goal's value (WebShop's fuzzy match, made exact because values come
// from one vocabulary).
func reward(p, target *product, selected []int, g *goal) RewardBreakdown {
	var b RewardBreakdown
	b.QueryMatch = p.ptype == target.ptype
	b.CategoryMatch = categoryMatch(productTypes[p.ptype].Path, productTypes[target.ptype].Path)
	b.TitleScore = titleScore(p.titleNouns, target.titleNouns)
	b.TypeReward = typeReward(b.QueryMatch, b.CategoryMatch, b.TitleScore)
	for _, a := range g.attrs {
		if slices.Contains(p.attrs, a) || strings.Contains(p.attrText, a) {
			b.Attributes++
		}
	}
	b.GoalAttributes, b.GoalOptions = len(g.attrs), len(g.options)
	for _, o := range g.options {
		if optionSelected(p, selected, o.value) {
			b.Options++
		}
		if optionOffered(p, o.value) {
			b.OptionsOffered++
		}
	}
	b.PriceOK = p.price <= g.priceLimit
	num := float64(b.Attributes + b.Options)
	if b.PriceOK {
		num++
	}
	b.Total = b.TypeReward * num / float64(len(g.attrs)+len(g.options)+1)
	return b
}

// typeReward is WebShop's r_type rule.
func typeReward(queryMatch, categoryMatch bool, titleScore float64) float64 {
	r := 1.0
	if !(queryMatch || categoryMatch || titleScore > 0.2) {
		r = 0.5
	}
	if titleScore < 0.1 {
		r = 0.1
	}
	if titleScore == 0 {
		r = 0
	}
	return r
}

// categoryMatch reports whether at least two distinct levels of the paths
// are shared, ignoring order.
func categoryMatch(a, b [3]string) bool {
	shared := 0
	for i, x := range a {
		if slices.Contains(a[:i], x) {
			continue
		}
		if slices.Contains(b[:], x) {
			shared++
		}
	}
	return shared >= 2
}

// titleScore is |nouns(bought) ∩ nouns(target)| / |nouns(target)|, or 0.2
// when the target title has no nouns (WebShop's default).
func titleScore(bought, target []string) float64 {
	if len(target) == 0 {
		return 0.2
	}
	n := 0
	for _, w := range target {
		if slices.Contains(bought, w) {
			n++
		}
	}
	return float64(n) / float64(len(target))
}

// optionOffered reports whether value is one of p's option values.
func optionOffered(p *product, value string) bool {
	for _, vals := range p.options {
		if slices.Contains(vals, value) {
			return true
		}
	}
	return false
}

// optionSelected reports whether value is among p's selected option values.
func optionSelected(p *product, selected []int, value string) bool {
	for d, i := range selected {
		if i >= 0 && p.options[d][i] == value {
			return true
		}
	}
	return false
}
