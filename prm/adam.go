package prm

import "math"

// adam is the Adam optimiser (Kingma & Ba) with optional decoupled weight
// decay, over a flat parameter vector.
type adam struct {
	lr, beta1, beta2, eps, decay float64
	m, v                         []float64
	t                            int
}

func newAdam(n int, lr, decay float64) *adam {
	return &adam{lr: lr, beta1: 0.9, beta2: 0.999, eps: 1e-8, decay: decay,
		m: make([]float64, n), v: make([]float64, n)}
}

// step moves params against grad.
func (a *adam) step(params, grad []float64) {
	a.t++
	c1 := 1 - math.Pow(a.beta1, float64(a.t))
	c2 := 1 - math.Pow(a.beta2, float64(a.t))
	for i, g := range grad {
		a.m[i] = a.beta1*a.m[i] + (1-a.beta1)*g
		a.v[i] = a.beta2*a.v[i] + (1-a.beta2)*g*g
		params[i] -= a.lr*(a.m[i]/c1)/(math.Sqrt(a.v[i]/c2)+a.eps) + a.lr*a.decay*params[i]
	}
}
