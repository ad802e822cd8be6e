package prm

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
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

// The serial products of the MLP give the very bits gonum's Gemm gives
// (trained models and golden files stay as they were), on products it
// computes whole and on those it splits into 64×64 blocks, with zeros in
// the hidden gradient it skips.
func TestSerialProductsMatchGemm(t *testing.T) {
	rng := newTestRand(7)
	for _, sz := range []struct{ n, h, dim int }{
		{1, 16, 256}, {100, 16, 256}, {192, 16, 256}, {193, 16, 256}, {900, 16, 256},
		{300, 3, 100}, {70, 70, 7}, {257, 65, 130},
	} {
		X, W1, A := make([]float64, sz.n*sz.dim), make([]float64, sz.h*sz.dim), make([]float64, sz.n*sz.h)
		for _, s := range [][]float64{X, W1, A} {
			for i := range s {
				s[i] = rng.NormFloat64()
			}
		}
		for i := 0; i < len(A); i += 7 {
			A[i] = 0
		}
		want, got := make([]float64, sz.n*sz.h), make([]float64, sz.n*sz.h)
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, general(X, sz.n, sz.dim), general(W1, sz.h, sz.dim), 0, general(want, sz.n, sz.h))
		hiddenSums(got, X, W1, sz.n, sz.h, sz.dim)
		if i := firstDifference(got, want); i >= 0 {
			t.Errorf("%+v: hidden sums differ from Gemm's at %d: %v, want %v", sz, i, got[i], want[i])
		}
		want, got = make([]float64, sz.h*sz.dim), make([]float64, sz.h*sz.dim)
		for i := range got {
			got[i] = math.NaN() // overwritten, not added to
		}
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, general(A, sz.n, sz.h), general(X, sz.n, sz.dim), 0, general(want, sz.h, sz.dim))
		outerSum(got, A, X, sz.n, sz.h, sz.dim)
		if i := firstDifference(got, want); i >= 0 {
			t.Errorf("%+v: outer sums differ from Gemm's at %d: %v, want %v", sz, i, got[i], want[i])
		}
	}
}

// firstDifference is the first index where a and b differ in their bits,
// or -1.
func firstDifference(a, b []float64) int {
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return i
		}
	}
	return -1
}
