package shop

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// Sentences used to pad descriptions, features and reviews. None of them may
// contain an attribute phrase: WebShop's attribute match also searches the
// title, features and description, so a stray phrase would credit a product
// with an attribute it lacks (TestTextNeverClaimsMissingAttributes).
var (
	fillerSentences = []string{
		"Designed for everyday use and backed by our satisfaction promise.",
		"Each piece is checked before it leaves the warehouse.",
		"Makes a thoughtful gift for friends and family.",
		"Ships in recyclable packaging.",
		"Please check the option you need before you order.",
		"Our support team answers questions within one business day.",
	}
	featureNotes = []string{
		"rated highly by our testers",
		"a detail our customers mention most",
		"confirmed by independent checks",
		"built into every unit of this model",
		"one reason this item sells well",
	}
	reviewTexts = []string{
		"Good value for the price.",
		"Exactly as described, would buy again.",
		"Arrived quickly and well packed.",
		"Does the job, nothing more.",
		"Better than the one I had before.",
		"Took a while to arrive but I am happy with it.",
	}
)

// describe writes the description and the feature bullets of p from its own
// attributes only.
func describe(rng *rand.Rand, p *product) (string, []string) {
	pt := &productTypes[p.ptype]
	desc := fmt.Sprintf("%s. This %s by %s is %s. %s", p.title, pt.Name, p.brand, joinAnd(p.attrs), pick(rng, fillerSentences))
	feats := make([]string, 0, len(p.attrs)+1)
	for _, a := range p.attrs {
		feats = append(feats, titleCase(a)+": "+pick(rng, featureNotes))
	}
	feats = append(feats, "Brand: "+p.brand)
	return desc, feats
}

// writeReviews writes two or three reviews and returns them with their mean
// rating rounded to one decimal.
func writeReviews(rng *rand.Rand, p *product) ([]review, float64) {
	pt := &productTypes[p.ptype]
	n := 2 + rng.IntN(2)
	out := make([]review, 0, n)
	total := 0
	for i := range n {
		stars := 3 + rng.IntN(3)
		text := pick(rng, reviewTexts)
		if i == 0 {
			text = fmt.Sprintf("Love this %s, it is %s.", pt.Name, pick(rng, p.attrs))
		}
		out = append(out, review{stars: stars, text: text})
		total += stars
	}
	return out, math.Round(10*float64(total)/float64(n)) / 10
}

// nounLexicon is the set of words the type reward treats as title nouns.
var nounLexicon = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range append(append([]string{}, typeNouns...), materialNouns...) {
		m[w] = true
	}
	return m
}()

// derive fills the cached strings of p.
func (p *product) derive() {
	for _, t := range tokenize(p.title) {
		if nounLexicon[t] && !slices.Contains(p.titleNouns, t) {
			p.titleNouns = append(p.titleNouns, t)
		}
	}
	p.attrText = strings.ToLower(p.title + "\n" + strings.Join(p.features, "\n") + "\n" + p.description)
	p.clickAction = "click[" + strings.ToLower(p.id) + "]"
	p.optionAction = make([][]string, len(p.options))
	for d, vals := range p.options {
		for _, v := range vals {
			p.optionAction[d] = append(p.optionAction[d], "click["+v+"]")
		}
	}
	p.itemHead = fmt.Sprintf("%s\nPrice: $%.2f\nRating: %.1f\n", p.title, p.price, p.rating)
	p.resultBlock = fmt.Sprintf("[button] %s [button_] %s [SEP] $%.2f\n", p.id, p.title, p.price)
}

// searchText is what the search index sees of p: title, attributes and
// description. Option values are left out, as they are only seen on the
// item page: a result need not offer the requested colour or size.
func (p *product) searchText() string {
	return p.title + " " + strings.Join(p.attrs, " ") + " " + p.description
}
