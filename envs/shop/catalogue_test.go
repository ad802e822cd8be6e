package shop

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// testWorld returns the cached world of the default configuration.
func testWorld(t testing.TB) *world {
	t.Helper()
	env, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	return env.world
}

func TestCatalogueShape(t *testing.T) {
	w := testWorld(t)
	prods := w.cat.products
	if got, want := len(prods), 2000; got != want {
		t.Fatalf("got %d products, want %d", got, want)
	}
	if len(productTypes) < 20 {
		t.Errorf("got %d product types, want at least 20", len(productTypes))
	}
	perType := make([]int, len(productTypes))
	ids := map[string]bool{}
	idPattern := regexp.MustCompile(`^B0[0-9A-Z]{8}$`)
	for i := range prods {
		p := &prods[i]
		perType[p.ptype]++
		if !idPattern.MatchString(p.id) || ids[p.id] {
			t.Errorf("product %d: id %q is malformed or repeated", i, p.id)
		}
		ids[p.id] = true
		if p.price <= 0 || p.title == "" || p.description == "" || len(p.features) == 0 || len(p.reviews) == 0 {
			t.Errorf("product %d is incomplete: %+v", i, p)
		}
		if len(p.attrs) < 2 {
			t.Errorf("product %d: got %d attributes, want at least 2", i, len(p.attrs))
		}
	}
	for ty, n := range perType {
		if n < 50 {
			t.Errorf("type %s: got %d products, want at least 50", productTypes[ty].Name, n)
		}
	}
}

func TestCatalogueIsDeterministic(t *testing.T) {
	a, b := buildCatalogue(300, 4), buildCatalogue(300, 4)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two builds of the same catalogue differ")
	}
}

// TestNearDuplicates: family members share type, brand and title words and
// differ somewhere a buyer must look (attributes, options or price).
func TestNearDuplicates(t *testing.T) {
	w := testWorld(t)
	distinct := 0
	for f, members := range w.members {
		first := &w.cat.products[members[0]]
		for _, m := range members[1:] {
			p := &w.cat.products[m]
			if p.ptype != first.ptype || p.brand != first.brand || !strings.HasPrefix(p.title, baseTitle(first.title)) {
				t.Fatalf("family %d: %q does not duplicate %q", f, p.title, first.title)
			}
			if !slices.Equal(p.attrs, first.attrs) || !reflect.DeepEqual(p.options, first.options) {
				distinct++
			}
		}
	}
	if pairs := len(w.cat.products) - len(w.members); distinct < pairs/2 {
		t.Errorf("only %d of %d near-duplicates differ from their first member in attributes or options", distinct, pairs)
	}
}

// baseTitle strips the attribute suffix a member may add to the family title.
func baseTitle(title string) string {
	base, _, _ := strings.Cut(title, ",")
	return base
}

// TestTextNeverClaimsMissingAttributes: the reward's text fallback (title,
// features, description) must never find an attribute a product lacks,
// so that "has the attribute" and "matches it" agree.
func TestTextNeverClaimsMissingAttributes(t *testing.T) {
	w := testWorld(t)
	var all []string
	for _, pt := range productTypes {
		all = append(all, pt.Attributes...)
	}
	for i := range w.cat.products {
		p := &w.cat.products[i]
		for _, a := range all {
			if !slices.Contains(p.attrs, a) && strings.Contains(p.attrText, a) {
				t.Errorf("product %d (%s) lacks %q but its text contains it: %q", i, p.title, a, p.attrText)
			}
		}
	}
}

// TestOptionValuesAreUnique: an item page must not offer the same click
// twice, nor a value that reads like a button.
func TestOptionValuesAreUnique(t *testing.T) {
	buttons := []string{"back to search", "< prev", "next >", "description", "features", "reviews", "buy now"}
	for _, pt := range productTypes {
		seen := map[string]bool{}
		for _, dim := range pt.Options {
			for _, v := range dim.Values {
				if seen[v] || slices.Contains(buttons, v) || strings.ContainsAny(v, "[]") {
					t.Errorf("type %s: option value %q is repeated or reserved", pt.Name, v)
				}
				seen[v] = true
			}
		}
	}
}

// TestSameTypeTitlesShareNouns: every product's title has nouns, and two
// products of one type always score r_type = 1 against each other.
func TestSameTypeTitlesShareNouns(t *testing.T) {
	w := testWorld(t)
	byType := map[int][]*product{}
	for i := range w.cat.products {
		p := &w.cat.products[i]
		if len(p.titleNouns) == 0 {
			t.Errorf("product %d: no nouns in %q", i, p.title)
		}
		byType[p.ptype] = append(byType[p.ptype], p)
	}
	for ty, ps := range byType {
		for _, a := range ps {
			for _, b := range ps {
				if s := titleScore(a.titleNouns, b.titleNouns); typeReward(true, false, s) != 1 {
					t.Fatalf("type %s: %q vs %q: title score %.2f gives r_type < 1", productTypes[ty].Name, a.title, b.title, s)
				}
			}
		}
	}
}

func TestProductID(t *testing.T) {
	tests := []struct {
		name  string
		index int
		want  string
	}{
		{"first", 0, "B0" + strings.ToUpper(formatPadded(0x2545F491))},
		{"second", 1, "B0" + strings.ToUpper(formatPadded(0x9E3779B1+0x2545F491))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := productID(tt.index); got != tt.want {
				t.Errorf("productID(%d) = %q, want %q", tt.index, got, tt.want)
			}
		})
	}
}

func formatPadded(n uint64) string {
	s := formatBase36(n)
	return strings.Repeat("0", 8-len(s)) + s
}
