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

// BenchmarkKernels compares the AVX2 and AVX-512 kernels on the default
// shapes (D = 16, H = 32, 28 actions: the alfworld preset's mean
// admissible count), in one binary so that both see the same machine:
// the hidden layer of one action from its cached lanes, tanh of a step's
// hidden units, and the backward pass's two products of a step.
func BenchmarkKernels(b *testing.B) {
	if !hasAVX512 {
		b.Skip("no AVX-512")
	}
	p, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	l := &p.lay
	rng := rand.New(rand.NewPCG(11, 12))
	fill := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return v
	}
	const nA = 28
	z, hs, h := fill(l.ina), fill(l.h), make([]float64, l.h)
	pre := fill(nA * l.h)
	dpre, zs := fill(nA*l.h), fill(nA*l.ina)
	gw, dz := make([]float64, l.h*l.in), make([]float64, nA*2*l.d)
	tailW, wT := make([]float64, (l.ina%4)*l.h), make([]float64, l.ina*l.h)
	l.tailWeights(p.params, tailW)
	l.transposedWeights(p.params, wT)
	avx512 := hasAVX512
	defer func() { hasAVX512 = avx512 }()
	for _, k := range []struct {
		name string
		on   bool
	}{{"avx2", false}, {"avx512", true}} {
		hasAVX512 = k.on
		lanes := make([]float64, 4*l.h)
		l.embedLanes(p.params, z[:l.d], lanes, wT)
		acc := make([]float64, 4*l.h)
		b.Run("hidden/"+k.name, func(b *testing.B) {
			for range b.N {
				l.hiddenRow(p.params, z, lanes, acc, hs, h, tailW, wT)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/action")
		})
		v := make([]float64, len(pre))
		b.Run("tanh/"+k.name, func(b *testing.B) {
			for range b.N {
				copy(v, pre)
				tanhAll(v)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/step")
		})
		b.Run("backward/"+k.name, func(b *testing.B) {
			for range b.N {
				addRows(gw[l.d:], l.in, dpre, 1, l.h, zs, l.ina, l.h, nA, l.ina)
				clear(dz)
				addRows(dz, 2*l.d, dpre, l.h, 1, p.params[l.w1+l.d:], l.in, nA, l.h, 2*l.d)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/step")
		})
	}
}
