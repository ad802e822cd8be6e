//go:build !purego

package policy

import "golang.org/x/sys/cpu"

// hasAVX selects the vector kernel; without AVX the portable one runs.
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
func hiddenAVX(h, hs, lanes, x, tail, w *float64, n, nt, stride, units int)

// hiddenUnits finishes the pre-activations of one action: for every unit
// j < len(h), starting from the lane sums lanes[4j:4j+4], it adds x (a
// multiple of 4 long) lane by lane against w_j = w[j*stride:], then tail
// to lane 0 against the weights that follow, and writes
// h[j] = hs[j] + ((s0+s2) + (s1+s3)).
func hiddenUnits(h, hs, lanes, x, tail, w []float64, stride int) {
	units := len(h)
	if units == 0 {
		return
	}
	_, _ = hs[units-1], lanes[4*units-1]
	_ = w[(units-1)*stride+len(x)+len(tail)-1] // bounds for the assembly
	if hasAVX && len(x) > 0 && len(tail) > 0 {
		hiddenAVX(&h[0], &hs[0], &lanes[0], &x[0], &tail[0], &w[0], len(x), len(tail), stride, units)
		return
	}
	hiddenUnitsGo(h, hs, lanes, x, tail, w, stride)
}
