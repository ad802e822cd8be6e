package policy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
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
	rng := rand.New(rand.NewPCG(1, 2))
	for _, d := range []int{1, 2, 3, 4, 5, 7, 8, 16, 17, 26, 27, 30} {
		for _, h := range []int{1, 3, 32, 65} {
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
