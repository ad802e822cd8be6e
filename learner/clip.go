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

// decoupledSurrogate is the on-policy term of a step that an older policy
// version played (Config.Decoupled): decoupled PPO (Hilton et al. 2021,
// "Batch size-invariance for policy optimization"; AReaL's asynchronous
// RL). The action was drawn from π_behav, the stale version, while the
// update starts from π_prox, the policy before the update. Then
//
//	J = E_{a~π_behav}[ w · min(r·A, clip(r, 1−ε, 1+ε)·A) ],
//	w = π_prox/π_behav,   r = π_θ/π_prox
//
// w corrects the distribution: at θ = θ_prox the gradient is
// E_behav[w·∇log π_θ·A] = E_prox[∇log π_θ·A], the policy gradient of the
// policy being updated; the clip keeps π_θ within ε of π_prox, the trust
// region of the policy being updated rather than of the stale one. With
// ρ = π_θ/π_behav = w·r the same objective reads
// min(ρ·A, clip(ρ, w(1−ε), w(1+ε))·A): the generalized clip of the
// off-policy term (Surrogate with logC = log w) with the clip range scaled
// by w, where eq. 4 keeps it ±ε. We keep the trust region of PPO in the
// proximal ratio, so that a small ε means the same step size whatever the
// lag. w is capped as ratios are (maxLogRatio). With no lag π_prox =
// π_behav, w = 1 and this is the plain on-policy clip (the trainer does
// not take this path then: lag-0 steps keep the plain arithmetic bit for
// bit).
//
// It returns the objective, its derivative with respect to logP (w·r·A on
// the unclipped branch, else 0), the proximal ratio r and whether the clip
// zeroed the gradient.
func decoupledSurrogate(logP, logProx, logBehav, eps, adv float64) (obj, dLogP, ratio float64, clipped bool) {
	w := math.Exp(min(logProx-logBehav, maxLogRatio))
	obj, dLogP, ratio, clipped = Surrogate(logP, logProx, 0, eps, adv)
	return w * obj, w * dLogP, ratio, clipped
}
