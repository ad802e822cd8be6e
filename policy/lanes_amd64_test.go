//go:build gc && !purego && !noasm && !safe && !amd64.v3

package policy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestWithoutVectorKernels reruns the golden and kernel tests with the
// vector kernels off, as on a CPU without AVX2, then with only the AVX-512
// ones off.
func TestWithoutVectorKernels(t *testing.T) {
	avx, avx512, loops, vtanh := hasAVX, hasAVX512, vecLoops, hasVectorTanh
	defer func() { hasAVX, hasAVX512, vecLoops, hasVectorTanh = avx, avx512, loops, vtanh }()
	hasAVX, hasAVX512, vecLoops, hasVectorTanh = false, false, false, false
	t.Run("golden", TestGoldenRollouts)
	t.Run("hidden", TestHiddenRowsMatchGemm)
	t.Run("addRows", TestAddRowsMatchesGemm)
	t.Run("tanh", TestTanhAllIsMathTanh)
	hasAVX, vecLoops, hasVectorTanh = avx, loops, vtanh
	t.Run("AVX2/golden", TestGoldenRollouts) // the AVX-512 kernels off, the others on
	t.Run("AVX2/hidden", TestHiddenRowsMatchGemm)
	t.Run("AVX2/tanh", TestTanhAllIsMathTanh)
	t.Run("AVX2/addRows", TestAddRowsMatchesGemm)
}

// TestTransposedKernelsMatchGo checks the AVX-512 kernels bit for bit
// against their portable loops, over unit counts of one and more groups,
// element counts with and without a tail, and inputs with zeros, negative
// zeros, infinities and NaNs (any NaN matching any other: the order of
// a compiled addition's operands, which picks the payload, is the compiler's).
func TestTransposedKernelsMatchGo(t *testing.T) {
	if !hasAVX512 {
		t.Skip("no AVX-512")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	val := func() float64 {
		switch rng.IntN(12) {
		case 0:
			return 0
		case 1:
			return math.Copysign(0, -1)
		case 2:
			return math.Inf(1 - 2*rng.IntN(2))
		case 3:
			if rng.IntN(4) == 0 {
				return math.NaN()
			}
		}
		return rng.NormFloat64()
	}
	fill := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = val()
		}
		return v
	}
	same := func(what string, a, b []float64) {
		t.Helper()
		for i := range a {
			// NaN payloads follow operand order, which the compiled loop may swap
			if math.Float64bits(a[i]) != math.Float64bits(b[i]) && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
				t.Fatalf("%s %d: assembly %v, loop %v", what, i, a[i], b[i])
			}
		}
	}
	for _, units := range []int{16, 32, 64} {
		for _, n := range []int{0, 4, 8, 24} {
			for _, nt := range []int{0, 1, 3} {
				wt := fill((n + nt) * units)
				lanes, x, tail, hs := fill(4*units), fill(n), fill(nt), fill(units)
				la, lg := append([]float64(nil), lanes...), append([]float64(nil), lanes...)
				lanesT(la, x, wt, units)
				lanesTGo(lg, x, wt, units)
				same(fmt.Sprintf("units %d n %d: lane", units, n), la, lg)
				ha, hg := make([]float64, units), make([]float64, units)
				hiddenT(ha, hs, lanes, x, tail, wt)
				hiddenTGo(hg, hs, lanes, x, tail, wt)
				same(fmt.Sprintf("units %d n %d nt %d: unit", units, n, nt), ha, hg)
			}
		}
	}
}
