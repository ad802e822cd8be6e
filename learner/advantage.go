package learner

import "math"

// Normalize returns (x_i − mean)/(std + eps) for each x_i, with the
// population standard deviation. A group whose values are all equal, or
// whose std is below minStd, gets exactly zero advantages (never NaN).
// The worked example of docs/algorithm.md (eq. 2): {1,0,1,0,0} →
// {1.22, −0.82, 1.22, −0.82, −0.82}.
func Normalize(x []float64, minStd, eps float64) (adv []float64, mean, std float64) {
	adv = make([]float64, len(x))
	if len(x) == 0 {
		return adv, 0, 0
	}
	mean, std = meanStd(x)
	if allEqual(x) || std < minStd {
		return adv, mean, std
	}
	for i, v := range x {
		adv[i] = (v - mean) / (std + eps)
	}
	return adv, mean, std
}

func meanStd(x []float64) (mean, std float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		std += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(std / float64(len(x)))
}

func allEqual(x []float64) bool {
	for _, v := range x {
		if v != x[0] {
			return false
		}
	}
	return true
}

// GAE returns generalised advantage estimates and value targets over the
// turns of one episode: δ_t = r_t + γ·V_{t+1} − V_t (V after the last turn
// is 0: episodes end), A_t = δ_t + γλ·A_{t+1}, target_t = A_t + V_t.
func GAE(rewards, values []float64, gamma, lambda float64) (adv, targets []float64) {
	n := len(rewards)
	adv, targets = make([]float64, n), make([]float64, n)
	next, acc := 0.0, 0.0
	for t := n - 1; t >= 0; t-- {
		delta := rewards[t] + gamma*next - values[t]
		acc = delta + gamma*lambda*acc
		adv[t] = acc
		targets[t] = acc + values[t]
		next = values[t]
	}
	return adv, targets
}

// DiscountedReturns returns G_t = Σ_{k≥t} γ^{k−t}·r_k for every turn.
func DiscountedReturns(rewards []float64, gamma float64) []float64 {
	g := make([]float64, len(rewards))
	acc := 0.0
	for t := len(rewards) - 1; t >= 0; t-- {
		acc = rewards[t] + gamma*acc
		g[t] = acc
	}
	return g
}
