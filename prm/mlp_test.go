package prm

import (
	"math"
	"testing"
)

// TestBackwardMatchesFiniteDifferences checks the hand-written gradient of
// Σ_i g_i·r̂_i against central differences for every parameter.
func TestBackwardMatchesFiniteDifferences(t *testing.T) {
	feat, err := NewHashProjection(HashProjectionConfig{Dim: 12, Nonzeros: 3})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(feat, ModelConfig{Hidden: 5, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	rng := newTestRand(4)
	for i := range m.params {
		m.params[i] = 0.5 * rng.NormFloat64()
	}
	const n = 4
	X := make([]float64, n*m.dim)
	for i := range X {
		X[i] = rng.NormFloat64() / 3
	}
	g := []float64{0.7, -1.3, 0.2, 2}
	objective := func() float64 {
		r := make([]float64, n)
		m.forwardRows(X, n, make([]float64, n*m.hidden), r)
		var s float64
		for i := range r {
			s += g[i] * r[i]
		}
		return s
	}
	A, r := make([]float64, n*m.hidden), make([]float64, n)
	m.forwardRows(X, n, A, r)
	grad := make([]float64, len(m.params))
	m.backwardRows(X, n, A, r, g, grad)
	const eps = 1e-6
	for i := range m.params {
		orig := m.params[i]
		m.params[i] = orig + eps
		up := objective()
		m.params[i] = orig - eps
		down := objective()
		m.params[i] = orig
		num := (up - down) / (2 * eps)
		if math.Abs(num-grad[i]) > 1e-6*math.Max(1, math.Abs(num)) {
			t.Errorf("parameter %d: analytic %v, numeric %v", i, grad[i], num)
		}
	}
}
