package policy

import "math"

// Distribution helpers over an admissible set, in terms of log-probabilities
// (as in Pass.LogProbs). Gradients are with respect to the logits the
// softmax was taken of, the form Policy.Backward expects.

// KL returns KL(p‖q) = Σ_a p_a·(log p_a − log q_a), exact over the set.
func KL(logP, logQ []float64) float64 {
	s := 0.0
	for a, lp := range logP {
		if pa := math.Exp(lp); pa > 0 {
			s += pa * (lp - logQ[a])
		}
	}
	return max(s, 0)
}

// Entropy returns H(p) = −Σ_a p_a·log p_a.
func Entropy(logP []float64) float64 {
	s := 0.0
	for _, lp := range logP {
		if pa := math.Exp(lp); pa > 0 {
			s -= pa * lp
		}
	}
	return s
}

// AddLogProbGrad adds c·∂log p_a/∂logit to dLogits: c·(1[b=a] − p_b).
func AddLogProbGrad(dLogits, logP []float64, a int, c float64) {
	for b, lp := range logP {
		dLogits[b] -= c * math.Exp(lp)
	}
	dLogits[a] += c
}

// AddKLGrad adds c·∂KL(p‖q)/∂logit to dLogits, where p is the softmax of
// the logits and q is fixed: c·p_b·((log p_b − log q_b) − KL).
func AddKLGrad(dLogits, logP, logQ []float64, c float64) {
	kl := KL(logP, logQ)
	for b, lp := range logP {
		dLogits[b] += c * math.Exp(lp) * (lp - logQ[b] - kl)
	}
}

// AddEntropyGrad adds c·∂H(p)/∂logit to dLogits: −c·p_b·(log p_b + H).
func AddEntropyGrad(dLogits, logP []float64, c float64) {
	h := Entropy(logP)
	for b, lp := range logP {
		dLogits[b] -= c * math.Exp(lp) * (lp + h)
	}
}

// Rand is the source of randomness for sampling: *rand.Rand of math/rand
// and of math/rand/v2 both satisfy it.
type Rand interface{ Float64() float64 }

// SampleIndex draws an index from probs by inverse CDF with one uniform.
func SampleIndex(probs []float64, rng Rand) int {
	u := rng.Float64()
	c := 0.0
	for a, p := range probs {
		c += p
		if u < c {
			return a
		}
	}
	for a := len(probs) - 1; a > 0; a-- {
		if probs[a] > 0 {
			return a
		}
	}
	return 0
}

// Argmax returns the index of the largest value (the first on ties).
func Argmax(v []float64) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}
