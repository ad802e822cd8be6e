package policy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// randomFeatures builds features of nA actions over p's buckets, with
// flags that are often zero, sometimes one, sometimes anything.
func randomFeatures(rng *rand.Rand, p *Policy, nA int) *Features {
	ids := func(n int) []int32 {
		v := make([]int32, n)
		for i := range v {
			v[i] = int32(rng.IntN(p.lay.buckets))
		}
		return v
	}
	f := &Features{state: ids(1 + rng.IntN(9)), actOff: []int32{0}, flags: make([]float64, nA*NumFlags)}
	for a := range nA {
		// a few distinct embeddings, so that the cache hits
		emb := ids(rng.IntN(3))
		if a > 0 && rng.IntN(2) == 0 {
			prev := f.embedded(rng.IntN(a))
			emb = append([]int32(nil), prev...)
		}
		f.actIDs = append(f.actIDs, emb...)
		f.actMid = append(f.actMid, int32(len(f.actIDs)))
		f.actIDs = append(f.actIDs, ids(rng.IntN(4))...)
		f.actOff = append(f.actOff, int32(len(f.actIDs)))
	}
	for i := range f.flags {
		switch rng.IntN(4) {
		case 0:
			f.flags[i] = 1
		case 1:
			f.flags[i] = rng.Float64()
		}
	}
	return f
}

// TestHiddenRowsMatchGemm checks bit for bit that the per-action rows and
// the action cache give what the matrix product gives, over shapes that
// exercise every lane pattern, with cache hits, parameter changes and
// non-finite flag weights.
func TestHiddenRowsMatchGemm(t *testing.T) {
	if !exactKernels {
		t.Skip("the dense layers call gonum directly in this build")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, d := range []int{1, 2, 3, 4, 5, 7, 8, 16, 17, 26, 27, 30} {
		for _, h := range []int{1, 3, 16, 32, 48, 65} {
			t.Run(fmt.Sprintf("D%d/H%d", d, h), func(t *testing.T) {
				p := newTestPolicy(t, Config{Buckets: 256, EmbedDim: d, Hidden: h, Seed: int64(d*100 + h)})
				for i := p.lay.sparse; i < p.lay.total; i++ {
					p.SetParam(i, p.Param(i)+rng.NormFloat64()) // all dense weights non-zero
				}
				var rows, gemm Pass
				for round := range 6 {
					switch round {
					case 3: // a new generation must not reuse the cache
						p.SetParam(p.lay.w1+p.lay.d, 1e3)
						for r := range int32(p.lay.buckets) {
							p.SetParam(p.lay.emb(r), p.Param(p.lay.emb(r))+0.5)
						}
					case 5: // 0·Inf is NaN: zero flags must count
						p.SetParam(p.lay.w1+3*p.lay.d+2, math.Inf(1))
					}
					f := randomFeatures(rng, p, 1+rng.IntN(12))
					compareHidden(t, p, f, &rows, &gemm)
				}
			})
		}
	}
}

func compareHidden(t *testing.T, p *Policy, f *Features, rows, gemm *Pass) {
	t.Helper()
	l := &p.lay
	for _, ps := range []*Pass{rows, gemm} {
		ps.size(l, f.NumActions())
		ps.f, ps.temp = f, p.cfg.Temperature
		p.embed(f.state, ps.xs)
		p.stateShare(ps)
	}
	p.hiddenRows(f, rows)
	p.hiddenGemm(f, gemm)
	for i := range rows.h {
		if math.Float64bits(rows.h[i]) != math.Float64bits(gemm.h[i]) {
			t.Fatalf("pre-activation %d: rows %v, product %v", i, rows.h[i], gemm.h[i])
		}
	}
	for i := range rows.z {
		if math.Float64bits(rows.z[i]) != math.Float64bits(gemm.z[i]) {
			t.Fatalf("input %d: rows %v, product %v", i, rows.z[i], gemm.z[i])
		}
	}
}

// TestAddRowsMatchesGemm checks the backward pass's products bit for bit
// against the Dgemm calls they replace, over sizes around every block
// boundary and coefficients that are zero, negative zero or NaN.
func TestAddRowsMatchesGemm(t *testing.T) {
	if !exactKernels {
		t.Skip("the dense layers call gonum directly in this build")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	coef := func() float64 {
		switch rng.IntN(6) {
		case 0:
			return 0
		case 1:
			return math.Copysign(0, -1)
		case 2:
			if rng.IntN(20) == 0 {
				return math.NaN()
			}
		}
		return rng.NormFloat64()
	}
	for _, m := range []int{1, 2, 5, 27} {
		for _, k := range []int{1, 3, 32} {
			for _, n := range []int{1, 3, 4, 7, 16, 32, 40, 43, 47, 50, 64, 75} {
				a := make([]float64, m*k) // m×k
				for i := range a {
					a[i] = coef()
				}
				b := make([]float64, k*(n+2)) // k×n, stride n+2
				for i := range b {
					b[i] = rng.NormFloat64()
				}
				c0 := make([]float64, m*(n+1)) // m×n, stride n+1
				for i := range c0 {
					c0[i] = rng.NormFloat64()
				}
				// C += A·B
				want := append([]float64(nil), c0...)
				blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, blas64.General{Rows: m, Cols: k, Data: a, Stride: k},
					blas64.General{Rows: k, Cols: n, Data: b, Stride: n + 2}, 1, blas64.General{Rows: m, Cols: n, Data: want, Stride: n + 1})
				got := append([]float64(nil), c0...)
				addRows(got, n+1, a, k, 1, b, n+2, m, k, n)
				sameBits(t, fmt.Sprintf("A·B %d×%d×%d", m, k, n), got, want)
				// C += Aᵀ·B with A k×m: coefficient (r, s) is a[s*m+r]
				at := make([]float64, k*m)
				copy(at, a)
				want = append(want[:0], c0...)
				blas64.Gemm(blas.Trans, blas.NoTrans, 1, blas64.General{Rows: k, Cols: m, Data: at, Stride: m},
					blas64.General{Rows: k, Cols: n, Data: b, Stride: n + 2}, 1, blas64.General{Rows: m, Cols: n, Data: want, Stride: n + 1})
				got = append(got[:0], c0...)
				addRows(got, n+1, at, 1, m, b, n+2, m, k, n)
				sameBits(t, fmt.Sprintf("Aᵀ·B %d×%d×%d", m, k, n), got, want)
			}
		}
	}
}

func sameBits(t *testing.T, what string, got, want []float64) {
	t.Helper()
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s: element %d: got %v, want %v", what, i, got[i], want[i])
		}
	}
}

// TestLoopKernels checks the vector versions of the passes' plain loops
// bit for bit against the loops, non-finite values included. A NaN's
// payload is not compared: which operand's payload a compiled sum keeps
// depends on register allocation, not on the source.
func TestLoopKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	val := func() float64 {
		switch rng.IntN(40) {
		case 0:
			return math.Inf(1)
		case 1:
			return math.NaN()
		case 2:
			return 0
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
	for _, units := range []int{1, 4, 8, 32, 36} {
		for _, nA := range []int{1, 3, 27} {
			w2, h, ds := fill(units), fill(nA*units), fill(nA)
			gw2, gb1 := fill(units), fill(units)
			gw2b, gb1b := append([]float64(nil), gw2...), append([]float64(nil), gb1...)
			dpre, dpreb := make([]float64, nA*units), make([]float64, nA*units)
			backHead(gw2, gb1, w2, h, dpre, ds)
			backHeadGo(gw2b, gb1b, w2, h, dpreb, ds)
			what := fmt.Sprintf("backHead %d×%d", nA, units)
			sameOrNaN(t, what+" gw2", gw2, gw2b)
			sameOrNaN(t, what+" gb1", gb1, gb1b)
			sameOrNaN(t, what+" dpre", dpre, dpreb)
		}
	}
	for _, d := range []int{1, 4, 7, 16, 32} {
		stride := d + 2
		params := fill(50 * stride)
		for _, n := range []int{1, 2, 9, 40} {
			ids := make([]int32, n)
			for i := range ids {
				ids[i] = int32(rng.IntN(50))
			}
			got, want := make([]float64, d), make([]float64, d)
			embedSum(got, params, ids, stride)
			embedSumGo(want, params, ids, stride)
			sameOrNaN(t, fmt.Sprintf("embedSum d%d n%d", d, n), got, want)
		}
	}
}

func sameOrNaN(t *testing.T, what string, got, want []float64) {
	t.Helper()
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
			t.Fatalf("%s: element %d: got %v, want %v", what, i, got[i], want[i])
		}
	}
}

// TestScatterAddMatchesLoop checks scatterAdd bit for bit against its
// loop, with repeated ids (a row takes each of its additions in order).
func TestScatterAddMatchesLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, d := range []int{1, 4, 16, 20} {
		stride := d + 2
		g := make([]float64, 50*stride)
		for i := range g {
			g[i] = rng.NormFloat64()
		}
		want := append([]float64(nil), g...)
		for range 20 {
			ids := make([]int32, rng.IntN(12))
			for i := range ids {
				ids[i] = int32(rng.IntN(8)) // repeats
			}
			v := make([]float64, d)
			for i := range v {
				v[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(9)-4))
			}
			scatterAdd(g, v, ids, stride)
			scatterAddGo(want, v, ids, stride)
		}
		for i := range g {
			if math.Float64bits(g[i]) != math.Float64bits(want[i]) {
				t.Fatalf("d %d: element %d: %v, loop %v", d, i, g[i], want[i])
			}
		}
	}
}
