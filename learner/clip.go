package learner

import "math"

// maxLogRatio caps log-ratios before exp so that a step whose behaviour
// probability was vanishingly small cannot make the loss infinite.
const maxLogRatio = 20

// Surrogate is one step's clipped objective in log space:
//
//	r   = exp(logP − logBase)
//	c   = exp(logC)
//	obj = min(r·A, clip(r, c−ε, c+ε)·A)
//
// For the on-policy term logBase = log π_old and logC = 0 (c = 1); for the
// off-policy term logBase = log π_B and logC = log π_old − log π_B. It
// returns the objective, its derivative with respect to logP (r·A where
// the unclipped branch is taken, else 0), the ratio, and whether the clip
// zeroed the gradient (A > 0 and r > c+ε, or A < 0 and r < c−ε).
func Surrogate(logP, logBase, logC, eps, adv float64) (obj, dLogP, ratio float64, clipped bool) {
	ratio = math.Exp(min(logP-logBase, maxLogRatio))
	c := math.Exp(min(logC, maxLogRatio))
	lo, hi := c-eps, c+eps
	switch {
	case adv > 0 && ratio > hi:
		return hi * adv, 0, ratio, true
	case adv < 0 && ratio < lo:
		return lo * adv, 0, ratio, true
	}
	return ratio * adv, ratio * adv, ratio, false
}
