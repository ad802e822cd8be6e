//go:build gc && !purego && !noasm && !safe

package policy

import (
	"slices"

	"golang.org/x/sys/cpu"
)

// exactKernels: gonum's Dgemm runs its amd64 assembly here, whose order
// of sums the kernels reproduce (see kernels.go).
const exactKernels = true

// hasAVX selects the vector kernels; without AVX the portable ones run.
var hasAVX = cpu.X86.HasAVX

// hasAVX512 selects the transposed kernels of the hidden layer (see
// layout.transposed).
var hasAVX512 = cpu.X86.HasAVX512F

//go:noescape
func laneSumsAVX(acc, x, w *float64, n, stride, h int)

// laneSums adds, for every unit j < h, x·w_j lane by lane to
// acc[4j:4j+4], where w_j = w[j*stride:] and len(x) is a multiple of 4:
// lane i takes x[4b+i]·w_j[4b+i] for b = 0, 1, ... in order.
func laneSums(acc, x, w []float64, stride, h int) {
	if h == 0 || len(x) == 0 {
		return
	}
	_, _ = acc[4*h-1], w[(h-1)*stride+len(x)-1] // bounds for the assembly
	if hasAVX {
		laneSumsAVX(&acc[0], &x[0], &w[0], len(x), stride, h)
		return
	}
	laneSumsGo(acc, x, w, stride, h)
}

//go:noescape
func hiddenAVX(h, hs, lanes, x, tail, w *float64, n, nt, stride, units int, wt *float64, wts int)

// hiddenUnits finishes the pre-activations of one action: for every unit
// j < len(h), starting from the lane sums lanes[4j:4j+4], it adds x (a
// multiple of 4 long) lane by lane against w_j = w[j*stride:], then tail
// to lane 0 against the weights that follow, and writes
// h[j] = hs[j] + ((s0+s2) + (s1+s3)). wt holds the tail weights again,
// unit-major: wt[t*len(h)+j] = w_j[len(x)+t].
func hiddenUnits(h, hs, lanes, x, tail, w, wt []float64, stride int) {
	units := len(h)
	if units == 0 {
		return
	}
	_, _ = hs[units-1], lanes[4*units-1]
	_ = w[(units-1)*stride+len(x)+len(tail)-1] // bounds for the assembly
	if hasAVX && len(x) > 0 && len(tail) > 0 {
		_ = wt[len(tail)*units-1]
		hiddenAVX(&h[0], &hs[0], &lanes[0], &x[0], &tail[0], &w[0], len(x), len(tail), stride, units, &wt[0], units)
		return
	}
	hiddenUnitsGo(h, hs, lanes, x, tail, w, stride)
}

//go:noescape
func addRowsAVX(y *float64, ys int, coef *float64, cs, ci int, x *float64, xs, rows, terms, n int)

// addRows adds, for every row r < rows and term s < terms in order,
// c·x[s*xs:][:n] to y[r*ys:][:n], where c = coef[r*cs+s*ci], skipping
// c = 0: the sums of gonum's Dgemm, element by element.
func addRows(y []float64, ys int, coef []float64, cs, ci int, x []float64, xs, rows, terms, n int) {
	if rows == 0 || terms == 0 || n == 0 {
		return
	}
	// bounds for the assembly
	_, _, _ = y[(rows-1)*ys+n-1], coef[(rows-1)*cs+(terms-1)*ci], x[(terms-1)*xs+n-1]
	if hasAVX512 {
		addRows512(&y[0], ys, &coef[0], cs, ci, &x[0], xs, rows, terms, n)
		return
	}
	if hasAVX {
		addRowsAVX(&y[0], ys, &coef[0], cs, ci, &x[0], xs, rows, terms, n)
		return
	}
	addRowsGo(y, ys, coef, cs, ci, x, xs, rows, terms, n)
}

//go:noescape
func addRows512(y *float64, ys int, coef *float64, cs, ci int, x *float64, xs, rows, terms, n int)

//go:noescape
func backHeadAVX(gw2, gb1, w2, h, dpre, ds *float64, nA, units int)

//go:noescape
func embedAVX(x, params *float64, ids *int32, n, stride, d int)

// vecLoops: the plain loops of the forward and backward passes may run as
// vector kernels, which round each product and sum like the compiled
// loops do only where the compiler fuses no multiply-add.
var vecLoops = hasAVX && !fusesMulAdd

// backHead does, for each action a in order, with c = ds[a] and h_a the
// a-th row of h: gw2 += c·h_a, dpre_a = c·w2·(1 − h_a²), gb1 += dpre_a.
func backHead(gw2, gb1, w2, h, dpre, ds []float64) {
	units := len(w2)
	if vecLoops && units&3 == 0 && len(ds) > 0 {
		_, _, _, _ = gw2[units-1], gb1[units-1], h[len(ds)*units-1], dpre[len(ds)*units-1]
		backHeadAVX(&gw2[0], &gb1[0], &w2[0], &h[0], &dpre[0], &ds[0], len(ds), units)
		return
	}
	backHeadGo(gw2, gb1, w2, h, dpre, ds)
}

// embedSum writes Σ params[id*stride:][:len(x)] over ids into x.
func embedSum(x, params []float64, ids []int32, stride int) {
	if vecLoops && len(x)&3 == 0 && len(x) > 0 && len(ids) > 0 {
		top := slices.Max(ids)
		_, _ = params[int(top)*stride+len(x)-1], params[int(slices.Min(ids))*stride] // bounds for the assembly
		embedAVX(&x[0], &params[0], &ids[0], len(ids), stride, len(x))
		return
	}
	embedSumGo(x, params, ids, stride)
}

//go:noescape
func lanesT512(lanes, x, wt *float64, n, units int)

//go:noescape
func hiddenT512(h, hs, lanes, x, tail, wt *float64, n, nt, units int)

// lanesT adds, for every unit j < units and lane k, x[4b+k]·wt[(4b+k)*units+j]
// to lanes[k*units+j] for b = 0, 1, ... in order; len(x) is a multiple of
// 4 and units of 16.
func lanesT(lanes, x, wt []float64, units int) {
	if len(x) == 0 {
		return
	}
	_, _ = lanes[4*units-1], wt[len(x)*units-1] // bounds for the assembly
	lanesT512(&lanes[0], &x[0], &wt[0], len(x), units)
}

// hiddenT is hiddenUnits in the transposed layout: starting from the
// lanes (lane-major), it adds x lane by lane against the weights
// wt[i*units+j], then tail to lane 0 against the rows that follow, and
// writes h[j] = hs[j] + ((s0+s2) + (s1+s3)). units = len(h) is a multiple
// of 16.
func hiddenT(h, hs, lanes, x, tail, wt []float64) {
	units := len(h)
	_, _ = hs[units-1], lanes[4*units-1]
	var xp, tp, wp *float64
	if len(x) > 0 {
		xp = &x[0]
	}
	if len(tail) > 0 {
		tp = &tail[0]
	}
	if n := len(x) + len(tail); n > 0 {
		_ = wt[n*units-1] // bounds for the assembly
		wp = &wt[0]
	}
	hiddenT512(&h[0], &hs[0], &lanes[0], xp, tp, wp, len(x), len(tail), units)
}

//go:noescape
func scatterAddAVX(dst, t *float64, ids *int32, n, stride, d int)

// scatterAdd adds t to g[id*stride:][:len(t)] for every id in order.
func scatterAdd(g, t []float64, ids []int32, stride int) {
	if vecLoops && len(t)&3 == 0 && len(t) > 0 && len(ids) > 0 {
		_, _ = g[int(slices.Max(ids))*stride+len(t)-1], g[int(slices.Min(ids))*stride] // bounds for the assembly
		scatterAddAVX(&g[0], &t[0], &ids[0], len(ids), stride, len(t))
		return
	}
	scatterAddGo(g, t, ids, stride)
}
