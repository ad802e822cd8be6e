package shop

import (
	"math"
	"testing"
)

func TestTypeReward(t *testing.T) {
	tests := []struct {
		name                      string
		queryMatch, categoryMatch bool
		titleScore                float64
		want                      float64
	}{
		{"same type", true, false, 0.5, 1},
		{"same category path", false, true, 0.2, 1},
		{"similar title", false, false, 0.25, 1},
		{"no match, some title overlap", false, false, 0.2, 0.5},
		{"title overlap below 0.1", true, false, 0.05, 0.1},
		{"no title overlap", true, true, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := typeReward(tt.queryMatch, tt.categoryMatch, tt.titleScore); got != tt.want {
				t.Errorf("typeReward(%v, %v, %v) = %v, want %v", tt.queryMatch, tt.categoryMatch, tt.titleScore, got, tt.want)
			}
		})
	}
}

func TestCategoryMatch(t *testing.T) {
	tests := []struct {
		name string
		a, b [3]string
		want bool
	}{
		{"same path", [3]string{"home", "bath", "towels"}, [3]string{"home", "bath", "towels"}, true},
		{"two levels", [3]string{"furniture", "living room", "tables"}, [3]string{"furniture", "living room", "tv stands"}, true},
		{"two levels in another order", [3]string{"a", "b", "c"}, [3]string{"c", "x", "a"}, true},
		{"department only", [3]string{"home", "bath", "towels"}, [3]string{"home", "decor", "pillows"}, false},
		{"repeated level counts once", [3]string{"a", "a", "b"}, [3]string{"a", "x", "y"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := categoryMatch(tt.a, tt.b); got != tt.want {
				t.Errorf("categoryMatch(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

// rewardFixture is a hand-made goal for a blanket and three products.
func rewardFixture() (target, sibling, pan *product, g *goal) {
	blanket, frying := typeIndex("blanket"), typeIndex("frying pan")
	mk := func(ptype int, title string, attrs []string, opts [][]string, price float64) *product {
		p := &product{ptype: ptype, title: title, attrs: attrs, options: opts, price: price}
		p.description = title + "."
		p.derive()
		return p
	}
	target = mk(blanket, "Luma Fleece Throw Blanket", []string{"machine washable", "super soft"},
		[][]string{{"navy blue", "beige"}, {"queen", "king"}}, 45.99)
	sibling = mk(blanket, "Luma Fleece Throw Blanket, Lightweight", []string{"super soft", "lightweight"},
		[][]string{{"navy blue", "ivory"}, {"twin", "queen"}}, 65.99)
	pan = mk(frying, "Luma Ceramic Frying Pan", []string{"easy to clean"}, [][]string{{"10 inch"}, {"black"}}, 19.99)
	g = &goal{
		attrs:      []string{"machine washable", "super soft"},
		options:    []goalOption{{0, "navy blue"}, {1, "queen"}},
		priceLimit: 60,
	}
	return target, sibling, pan, g
}

func typeIndex(name string) int {
	for i, pt := range productTypes {
		if pt.Name == name {
			return i
		}
	}
	panic("no product type " + name)
}

func TestReward(t *testing.T) {
	target, sibling, pan, g := rewardFixture()
	tests := []struct {
		name     string
		p        *product
		selected []int
		want     float64
		success  bool
		offered  int // goal options the product offers
	}{
		{"target with both options", target, []int{0, 0}, 1, true, 2},
		{"target, one option", target, []int{0, -1}, 4.0 / 5, false, 2},
		{"target, wrong colour", target, []int{1, 0}, 4.0 / 5, false, 2},
		{"target, no options", target, []int{-1, -1}, 3.0 / 5, false, 2},
		// sibling: super soft only, options navy blue and queen, over the limit
		{"near-duplicate", sibling, []int{0, 1}, 3.0 / 5, false, 2},
		// another type without shared title nouns: r_type 0
		{"wrong type", pan, []int{0, 0}, 0, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := reward(tt.p, target, tt.selected, g)
			if math.Abs(got.Total-tt.want) > 1e-12 || got.Success() != tt.success {
				t.Errorf("reward = %v (success %v), want %v (success %v); breakdown %+v", got.Total, got.Success(), tt.want, tt.success, got)
			}
			if got.OptionsOffered != tt.offered || got.GoalOptions != 2 || got.GoalAttributes != 2 {
				t.Errorf("options offered %d of %d (attributes %d), want %d of 2 (2)", got.OptionsOffered, got.GoalOptions, got.GoalAttributes, tt.offered)
			}
		})
	}
}

// TestRewardTextFallback: like WebShop, an attribute also matches when its
// phrase occurs in the title, features or description.
func TestRewardTextFallback(t *testing.T) {
	target, _, _, g := rewardFixture()
	p := *target
	p.attrs = []string{"super soft"}
	p.attrText = "luma fleece throw blanket, machine washable"
	if got := reward(&p, target, []int{0, 0}, g); got.Attributes != 2 {
		t.Errorf("got %d matched attributes, want 2 (one from the title)", got.Attributes)
	}
}
