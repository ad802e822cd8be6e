//go:build gc && !purego && !noasm && !safe

package policy

import "golang.org/x/sys/cpu"

// exactKernels: gonum's Dgemm runs its amd64 assembly here, whose order
// of sums the kernels reproduce (see kernels.go).
const exactKernels = true

// hasAVX selects the vector kernels; without AVX the portable ones run.
var hasAVX = cpu.X86.HasAVX

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
	if hasAVX {
		addRowsAVX(&y[0], ys, &coef[0], cs, ci, &x[0], xs, rows, terms, n)
		return
	}
	addRowsGo(y, ys, coef, cs, ci, x, xs, rows, terms, n)
}
