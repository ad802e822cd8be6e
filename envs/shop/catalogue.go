package shop

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// product is one catalogue item. Everything an episode renders about it is
// prepared once when the catalogue is built.
type product struct {
	index  int
	id     string // "B0…" as shown; actions use the lower-cased form
	ptype  int    // index into productTypes
	family int
	brand  string
	title  string
	// attrs are the attribute phrases the product has.
	attrs []string
	// options[d] are the values offered for the type's option dimension d,
	// in the dimension's order.
	options     [][]string
	price       float64
	description string
	features    []string
	reviews     []review
	rating      float64

	// Derived once for rewards and rendering.
	titleNouns   []string // lexicon nouns of the title, distinct
	attrText     string   // lower-cased title, features and description
	clickAction  string   // "click[b0…]"
	optionAction [][]string
	resultBlock  string // the product's line on a results page: id, title, price
	itemHead     string // title, price and rating lines of the item page
}

// review is one customer review.
type review struct {
	stars int
	text  string
}

// catalogue is the generated product list.
type catalogue struct {
	products []product
}

// family is what near-duplicates share.
type family struct {
	index   int
	ptype   int
	brand   string
	title   string
	attrs   []string
	options [][]string
	price   float64
}

// buildCatalogue generates size products in families of famSize, cycling
// through the product types, deterministically from catalogueSeed.
func buildCatalogue(size, famSize int) *catalogue {
	rng := rand.New(rand.NewPCG(catalogueSeed, 1))
	c := &catalogue{products: make([]product, 0, size)}
	for f := 0; len(c.products) < size; f++ {
		fam := newFamily(rng, f, f%len(productTypes))
		for range min(famSize, size-len(c.products)) {
			p := newMember(rng, fam, len(c.products))
			c.products = append(c.products, p)
		}
	}
	for i := range c.products {
		c.products[i].derive()
	}
	return c
}

// newFamily draws the shared base of a family of product type t.
func newFamily(rng *rand.Rand, index, t int) family {
	pt := &productTypes[t]
	f := family{
		index: index,
		ptype: t,
		brand: pick(rng, brands),
		attrs: sample(rng, pt.Attributes, 3+rng.IntN(3)),
		price: pt.MinPrice + rng.Float64()*(pt.MaxPrice-pt.MinPrice),
	}
	f.title = f.brand + " " + pick(rng, pt.Descriptors) + " " + pick(rng, pt.Heads)
	for _, dim := range pt.Options {
		n := min(len(dim.Values), 2+rng.IntN(3))
		f.options = append(f.options, inOrder(dim.Values, sample(rng, dim.Values, n)))
	}
	return f
}

// newMember derives one near-duplicate from its family: an attribute may be
// dropped or added, an offered option value swapped, and the price moves.
func newMember(rng *rand.Rand, f family, index int) product {
	pt := &productTypes[f.ptype]
	p := product{
		index: index, id: productID(index), ptype: f.ptype, family: f.index,
		brand: f.brand, title: f.title, attrs: slices.Clone(f.attrs),
	}
	if rng.IntN(10) < 6 && len(p.attrs) > 2 {
		i := rng.IntN(len(p.attrs))
		p.attrs = slices.Delete(p.attrs, i, i+1)
	}
	if rng.IntN(10) < 6 {
		if extra := missing(pt.Attributes, p.attrs); len(extra) > 0 {
			p.attrs = append(p.attrs, pick(rng, extra))
		}
	}
	p.attrs = inOrder(pt.Attributes, p.attrs)
	for d, dim := range pt.Options {
		p.options = append(p.options, swapOne(rng, dim.Values, f.options[d]))
	}
	p.price = math.Floor(f.price*(0.8+0.5*rng.Float64())) + 0.99
	if rng.IntN(10) < 6 {
		p.title += ", " + titleCase(pick(rng, p.attrs))
	}
	p.description, p.features = describe(rng, &p)
	p.reviews, p.rating = writeReviews(rng, &p)
	return p
}

// swapOne returns offered with, half of the time, one value replaced by a
// value of all it does not offer; the result keeps all's order.
func swapOne(rng *rand.Rand, all, offered []string) []string {
	out := slices.Clone(offered)
	if rest := missing(all, out); len(rest) > 0 && rng.IntN(2) == 0 {
		out[rng.IntN(len(out))] = pick(rng, rest)
	}
	return inOrder(all, out)
}

// productID returns a unique ASIN-like id: "B0" and 8 base-36 digits from
// a bijection of the index.
func productID(index int) string {
	const space = 36 * 36 * 36 * 36 * 36 * 36 * 36 * 36
	n := (uint64(index)*0x9E3779B1 + 0x2545F491) % space
	digits := strings.ToUpper(strings.Repeat("0", 8) + formatBase36(n))
	return "B0" + digits[len(digits)-8:]
}

func formatBase36(n uint64) string {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 36 {
		b = append(b, alphabet[n%36])
	}
	slices.Reverse(b)
	return string(b)
}

// pick returns a uniformly chosen element of list.
func pick(rng *rand.Rand, list []string) string { return list[rng.IntN(len(list))] }

// sample returns n distinct elements of list in random order.
func sample(rng *rand.Rand, list []string, n int) []string {
	perm := rng.Perm(len(list))
	out := make([]string, 0, n)
	for _, i := range perm[:min(n, len(list))] {
		out = append(out, list[i])
	}
	return out
}

// missing returns the elements of all not in have, in all's order.
func missing(all, have []string) []string {
	var out []string
	for _, s := range all {
		if !slices.Contains(have, s) {
			out = append(out, s)
		}
	}
	return out
}

// inOrder returns the elements of subset sorted by their position in all.
func inOrder(all, subset []string) []string {
	out := make([]string, 0, len(subset))
	for _, s := range all {
		if slices.Contains(subset, s) {
			out = append(out, s)
		}
	}
	return out
}
