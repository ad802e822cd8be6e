package policy

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// priceState is a results page of four items that differ only in their
// (unseen) ids and prices, with an instruction that sets a price limit; it
// returns the state and which items are within the limit.
func priceState(rng *rand.Rand) (*State, []bool) {
	limit := float64(10 + 5*rng.IntN(30))
	s := &State{
		Instruction: fmt.Sprintf("i need a wool blanket, and price lower than %.2f dollars", limit),
		Observation: "[button] Back to Search [button_]\nPage 1 (Total results: 4)\n",
		Admissible:  []string{"click[back to search]"},
	}
	ok := []bool{false}
	cheap := rng.IntN(4) // at least one item within the limit
	for i := range 4 {
		id := fmt.Sprintf("b0%08d", rng.IntN(1e8))
		price := limit + 1 + float64(rng.IntN(40))
		if i == cheap || rng.IntN(3) == 0 {
			price = limit - 1 - float64(rng.IntN(int(limit)-2))
		}
		s.Observation += fmt.Sprintf("[button] %s [button_] Nordic Wool Blanket [SEP] $%.2f\n", id, price-0.01)
		s.Admissible = append(s.Admissible, "click["+id+"]")
		ok = append(ok, price < limit)
	}
	return s, ok
}

// TestPolicyLearnsAPriceLimit: an item's price is a number to compare
// with the instruction's limit, not a hashed word. Trained to click items
// within the limit on pages whose items differ only in id and price, the
// policy must then pick such an item on pages of unseen ids, prices and
// limits; by ids and prices as words it can only guess (about 50 % here).
func TestPolicyLearnsAPriceLimit(t *testing.T) {
	train, held := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(3, 4))
	p := trainToPick(t, func() (*State, []bool) { return priceState(train) })
	if frac := pickedRight(t, p, func() (*State, []bool) { return priceState(held) }); frac < 0.95 {
		t.Errorf("picked an item within the price limit on %.1f%% of unseen pages, want ≥ 95%%", 100*frac)
	}
}

// trainToPick trains a fresh policy for 300 steps to raise the
// log-probability of the good actions of the states next draws.
func trainToPick(t *testing.T, next func() (*State, []bool)) *Policy {
	t.Helper()
	p := newTestPolicy(t, Config{Buckets: 1 << 12})
	opt, err := NewAdam(p, AdamConfig{LR: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	g := p.NewGrads()
	var ps Pass
	for range 300 {
		s, ok := next()
		f, err := p.NewFeaturizer().Features(s)
		if err != nil {
			t.Fatal(err)
		}
		p.Forward(f, &ps)
		d := make([]float64, len(ps.LogProbs))
		for a, good := range ok {
			if good {
				AddLogProbGrad(d, ps.LogProbs, a, -1)
			}
		}
		g.Zero()
		if err := p.Backward(&ps, d, 0, g); err != nil {
			t.Fatal(err)
		}
		if err := opt.Step(p, g); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// pickedRight is the share of 400 states drawn by next on which p's most
// probable action is a good one.
func pickedRight(t *testing.T, p *Policy, next func() (*State, []bool)) float64 {
	t.Helper()
	right, n := 0, 400
	for range n {
		s, ok := next()
		probs, _, err := p.Distribution(s)
		if err != nil {
			t.Fatal(err)
		}
		if ok[Argmax(probs)] {
			right++
		}
	}
	return float64(right) / float64(n)
}

// TestDecimalNumbers: a decimal is one number however tokenize splits it
// at its point, each number carries the word before it, and words keep
// their hashes.
func TestDecimalNumbers(t *testing.T) {
	text := "price lower than 60.00 dollars, $45.99 or 7"
	nums := appendNumbers(text, 0, len(text), nil)
	var vals []float64
	for _, n := range nums {
		vals = append(vals, n.val)
	}
	if fmt.Sprint(vals) != "[60 45.99 7]" || nums[0].before != hashWord("than") || nums[2].before != hashWord("or") {
		t.Errorf("numbers %v (before %x, %x), want [60 45.99 7] after than and or", vals, nums[0].before, nums[2].before)
	}
	if frac := appendNumbers(text, 20, len(text), nil); frac[0].val != 45.99 { // from the fraction of 60.00 on
		t.Errorf("a fraction read as a number of its own: %v", frac)
	}
	if toks := tokenize(text, nil); toks[0].h != hashWord("price") || toks[0].num {
		t.Error("a word's token changed")
	}
}

// optionState is an item page whose one option row offers three sizes, the
// instruction naming one of them; it returns the state and which action
// clicks the named size. Sizes are drawn from lo + [0, 40): training and
// held-out pages use disjoint ranges.
func optionState(rng *rand.Rand, lo int) (*State, []bool) {
	sizes := rng.Perm(40)[:3]
	want := rng.IntN(3)
	s := &State{
		Instruction: fmt.Sprintf("i want a tv stand for a %d inch tv, and price lower than 300.00 dollars", lo+sizes[want]),
		Observation: "[button] Back to Search [button_]\n[button] < Prev [button_]\nsize:",
		Admissible:  []string{"click[back to search]", "click[< prev]"},
	}
	ok := []bool{false, false}
	for i, v := range sizes {
		s.Observation += fmt.Sprintf(" [button] %d inch [button_]", lo+v)
		s.Admissible = append(s.Admissible, fmt.Sprintf("click[%d inch]", lo+v))
		ok = append(ok, i == want)
	}
	s.Observation += "\nCorvo Rustic TV Stand Media Console\nPrice: $106.99\n[button] Buy Now [button_]"
	s.Admissible = append(s.Admissible, "click[buy now]")
	return s, append(ok, false)
}

// TestPolicyLearnsTheNamedOption: an option's value is often a number
// ("55 inch", "2.5 oz", "set of 2"), and the option row names every value,
// so only the action's own number, compared with the instruction's, tells
// the asked-for one from the others. Trained to click the named size, the
// policy must pick it on pages of sizes it never saw; by hashed words it
// can only guess among the three (about 33 %).
func TestPolicyLearnsTheNamedOption(t *testing.T) {
	train, held := rand.New(rand.NewPCG(5, 6)), rand.New(rand.NewPCG(7, 8))
	p := trainToPick(t, func() (*State, []bool) { return optionState(train, 10) })
	if frac := pickedRight(t, p, func() (*State, []bool) { return optionState(held, 60) }); frac < 0.95 {
		t.Errorf("clicked the instruction's size on %.1f%% of pages with unseen sizes, want ≥ 95%%", 100*frac)
	}
}
