package learner

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
)

// perturbed returns a policy whose every parameter is random, so that no
// gradient path is zero.
func perturbed(t testing.TB, seed int64) *policy.Policy {
	p := smallPolicy(t, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 9))
	for i := range p.NumParams() {
		p.SetParam(i, p.Param(i)+rng.NormFloat64()*0.3)
	}
	return p
}

// TestLossGradientCheck compares the trainer's gradient of the full loss
// (clipped on- and off-policy terms, KL to a different reference, entropy,
// value loss) with central finite differences on every parameter.
func TestLossGradientCheck(t *testing.T) {
	env, tasks := courierTasks(t, 2, 7)
	cases := []struct {
		algo Algo
		swap SwapConfig
	}{
		{algo: GRPO}, {algo: PPO}, {algo: GiGPO},
		{algo: GRPO, swap: SwapConfig{Weight: 0.5, K: 2, Partners: PartnersKNN}},
	}
	for _, tc := range cases {
		algo := tc.algo
		t.Run(fmt.Sprintf("%s/swap=%v", algo, tc.swap.Weight), func(t *testing.T) {
			actor := perturbed(t, 3)
			on := collect(t, env, tasks, actor, 3, 1, schemas.SourceOnPolicy)
			off := collect(t, env, tasks[:1], perturbed(t, 4), 2, 2, schemas.SourceExplore)
			for i, tr := range on { // move ratios out of the clip interval both ways
				for j := range tr.Steps {
					tr.Steps[j].BehaviorLogProb += []float64{-0.4, 0.4, 0}[i%3]
				}
			}
			for _, tr := range []*schemas.Trajectory{on[0], on[4]} { // successes, so GRPO has advantages
				tr.Success, tr.OutcomeReward, tr.Steps[len(tr.Steps)-1].Reward = true, 1, 1
			}
			p := perturbed(t, 5)
			tr := newTrainer(t, p, Config{Algo: algo, Beta: 0.3, EntropyCoef: 0.2, ValueCoef: 0.7, Alpha: 0.3, Swap: tc.swap})
			if err := tr.SetReference(perturbed(t, 6)); err != nil {
				t.Fatal(err)
			}
			samples, err := tr.prepare(on, off)
			if err != nil {
				t.Fatal(err)
			}
			groups := groupSamples(samples)
			tr.oldPass(samples)
			tr.assignAdvantages(samples, groups)
			if pairs := tr.assignSwap(samples); (pairs > 0) != (tc.swap.Weight > 0) {
				t.Fatalf("got %d swap pairs with weight %v", pairs, tc.swap.Weight)
			}
			var onIdx, offIdx []int
			for i, s := range samples {
				if s.off {
					offIdx = append(offIdx, i)
				} else {
					onIdx = append(onIdx, i)
				}
			}
			g := p.NewGrads()
			loss := func(g *policy.Grads) float64 {
				l, _ := tr.accumulate(samples, onIdx, offIdx, g, &accum{})
				return l
			}
			loss(g)
			acc := &accum{}
			tr.accumulate(samples, onIdx, offIdx, nil, acc)
			if acc.on.clip.mean() == 0 {
				t.Fatal("no clipped step: the check would not cover the clipped branch")
			}
			const h = 1e-6
			worst := 0.0
			stride := 1
			if testing.Short() {
				stride = 5
			}
			for i := 0; i < p.NumParams(); i += stride {
				orig := p.Param(i)
				p.SetParam(i, orig+h)
				up := loss(nil)
				p.SetParam(i, orig-h)
				down := loss(nil)
				p.SetParam(i, orig)
				num, ana := (up-down)/(2*h), g.At(i)
				if e := math.Abs(num - ana); e > 1e-6+1e-5*math.Abs(num) {
					t.Fatalf("param %d: got analytic %.9g, want numeric %.9g", i, ana, num)
				} else {
					worst = max(worst, e)
				}
			}
			t.Logf("%d parameters, worst abs error %.2g, on clip fraction %.2f", p.NumParams(), worst, acc.on.clip.mean())
		})
	}
}
