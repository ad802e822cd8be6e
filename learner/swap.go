package learner

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/rspo-dev/rspo/policy"
)

// The "second reading" of reward swap (docs/algorithm.md, "Optional swap
// term"): inside a batch, step i's advantage is also applied, with weight
// λ·w_ij and scale β_s, to the log-prob of K partner steps j. It is not
// the paper's method and is off unless SwapConfig.Weight > 0. The added
// objective, weighted like the on-policy term, is
//
//	J_swap = mean_j c_j·log π_θ(a_j|s_j),  c_j = λ·β_s·Σ_{i: j ∈ P(i)} w_ij·A_i
//
// over on-policy steps; partners come from other trajectories of the batch.

// Partners names how swap partners are chosen.
type Partners string

// The partner choices.
const (
	// PartnersRandom picks K steps uniformly, w_ij = 1/K.
	PartnersRandom Partners = "random"
	// PartnersBucket picks K steps of trajectories whose return falls in
	// the same bucket (SwapConfig.BucketWidth), w_ij = 1/K.
	PartnersBucket Partners = "bucket"
	// PartnersKNN picks the K most similar states (policy.StateSimilarity)
	// among SwapConfig.Candidates random steps, w_ij ∝ similarity.
	PartnersKNN Partners = "knn"
)

// SwapConfig configures the optional cross-turn swap term.
type SwapConfig struct {
	// Weight is λ; 0 (the default) turns the term off.
	Weight float64
	// Scale is β_s. Default 1.
	Scale float64
	// K is the number of partners per step. Default 1.
	K int
	// Partners is how partners are chosen. Default PartnersRandom.
	Partners Partners
	// Prob is the probability that a step swaps at all. Default 1.
	Prob float64
	// RampUpdates ramps λ linearly from 0 over this many updates; 0 means
	// no ramp.
	RampUpdates int
	// BucketWidth is the return bucket width for PartnersBucket. Default 0.1.
	BucketWidth float64
	// Candidates is how many random steps PartnersKNN compares. Default 32.
	Candidates int
}

func (c SwapConfig) withDefaults() SwapConfig {
	if c.Scale == 0 {
		c.Scale = 1
	}
	if c.K == 0 {
		c.K = 1
	}
	if c.Partners == "" {
		c.Partners = PartnersRandom
	}
	if c.Prob == 0 {
		c.Prob = 1
	}
	if c.BucketWidth == 0 {
		c.BucketWidth = 0.1
	}
	if c.Candidates == 0 {
		c.Candidates = 32
	}
	return c
}

func (c SwapConfig) validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &ConfigError{Field: "Swap." + field, Reason: fmt.Sprintf(format, args...)})
	}
	if !(c.Weight >= 0 && c.Weight <= 100) {
		bad("Weight", "%v not in [0, 100]", c.Weight)
	}
	if !(c.Scale > 0 && c.Scale <= 100) {
		bad("Scale", "%v not in (0, 100]", c.Scale)
	}
	if c.K < 1 || c.K > 64 {
		bad("K", "%d not in 1..64", c.K)
	}
	if c.Partners != PartnersRandom && c.Partners != PartnersBucket && c.Partners != PartnersKNN {
		bad("Partners", "%q is not random, bucket or knn", c.Partners)
	}
	if !(c.Prob > 0 && c.Prob <= 1) {
		bad("Prob", "%v not in (0, 1]", c.Prob)
	}
	if c.RampUpdates < 0 {
		bad("RampUpdates", "%d negative", c.RampUpdates)
	}
	if !(c.BucketWidth > 0) {
		bad("BucketWidth", "%v not positive", c.BucketWidth)
	}
	if c.Candidates < 1 || c.Candidates > 4096 {
		bad("Candidates", "%d not in 1..4096", c.Candidates)
	}
	return errors.Join(errs...)
}

// stepRef names one step of a batch.
type stepRef struct{ s, t int }

// swapWeight is λ for the coming update, after the ramp.
func (t *Trainer) swapWeight() float64 {
	c := t.cfg.Swap
	if c.RampUpdates == 0 {
		return c.Weight
	}
	return c.Weight * math.Min(1, float64(t.updates+1)/float64(c.RampUpdates))
}

// assignSwap fills every on-policy sample's swap coefficients c_j and
// returns the number of (i, j) pairs.
func (t *Trainer) assignSwap(samples []*sample) int {
	lambda := t.swapWeight()
	var steps []stepRef
	for si, s := range samples {
		if !s.off {
			s.swap = make([]float64, len(s.t.Steps))
			for k := range s.t.Steps {
				steps = append(steps, stepRef{si, k})
			}
		}
	}
	if lambda == 0 || len(steps) < 2 {
		return 0
	}
	c := t.cfg.Swap
	pairs := 0
	for _, i := range steps {
		adv := samples[i.s].adv[i.t]
		if adv == 0 || t.rng.Float64() >= c.Prob {
			continue
		}
		for _, p := range t.partners(samples, steps, i) {
			samples[p.ref.s].swap[p.ref.t] += lambda * c.Scale * p.w * adv
			pairs++
		}
	}
	return pairs
}

// partner is a chosen step with its weight w_ij.
type partner struct {
	ref stepRef
	w   float64
}

// partners chooses step i's partners among steps of other trajectories.
func (t *Trainer) partners(samples []*sample, steps []stepRef, i stepRef) []partner {
	c := t.cfg.Swap
	var pool []stepRef
	switch c.Partners {
	case PartnersBucket:
		bucket := math.Floor(samples[i.s].ret / c.BucketWidth)
		for _, j := range steps {
			if j.s != i.s && math.Floor(samples[j.s].ret/c.BucketWidth) == bucket {
				pool = append(pool, j)
			}
		}
		return t.uniform(pool, c.K)
	case PartnersKNN:
		return t.nearest(samples, steps, i)
	default:
		for range 4 * c.K { // rejection sampling: other trajectories only
			if j := steps[t.rng.IntN(len(steps))]; j.s != i.s {
				pool = append(pool, j)
			}
		}
		return t.uniform(pool, c.K)
	}
}

// uniform picks up to k distinct entries of pool with weight 1/k.
func (t *Trainer) uniform(pool []stepRef, k int) []partner {
	t.rng.Shuffle(len(pool), func(a, b int) { pool[a], pool[b] = pool[b], pool[a] })
	out := make([]partner, 0, k)
	for _, j := range pool {
		if len(out) == k {
			break
		}
		if !slices.ContainsFunc(out, func(p partner) bool { return p.ref == j }) {
			out = append(out, partner{ref: j, w: 1 / float64(k)})
		}
	}
	return out
}

// nearest picks the K most similar states among random candidates of
// other trajectories, weighted by similarity (normalised to sum to 1).
func (t *Trainer) nearest(samples []*sample, steps []stepRef, i stepRef) []partner {
	c := t.cfg.Swap
	fi := samples[i.s].feats[i.t]
	var cands []partner
	for range c.Candidates {
		j := steps[t.rng.IntN(len(steps))]
		if j.s == i.s || slices.ContainsFunc(cands, func(p partner) bool { return p.ref == j }) {
			continue
		}
		cands = append(cands, partner{ref: j, w: policy.StateSimilarity(fi, samples[j.s].feats[j.t])})
	}
	slices.SortStableFunc(cands, func(a, b partner) int { return cmp.Compare(b.w, a.w) })
	cands = cands[:min(c.K, len(cands))]
	total := 0.0
	for _, p := range cands {
		total += p.w
	}
	if total == 0 {
		return nil
	}
	for k := range cands {
		cands[k].w /= total
	}
	return cands
}
