//go:build !amd64 || !gc || purego || noasm || safe

package policy

// exactKernels says whether gonum's Dgemm runs its amd64 assembly, whose
// order of sums the kernels reproduce (see kernels.go); elsewhere the
// dense layers keep calling gonum. With purego alone gonum still does.
const exactKernels = amd64Gonum

// laneSums adds, for every unit j < h, x·w_j lane by lane to
// acc[4j:4j+4], where w_j = w[j*stride:] and len(x) is a multiple of 4:
// lane i takes x[4b+i]·w_j[4b+i] for b = 0, 1, ... in order.
func laneSums(acc, x, w []float64, stride, h int) { laneSumsGo(acc, x, w, stride, h) }

// hiddenUnits finishes the pre-activations of one action: for every unit
// j < len(h), starting from the lane sums lanes[4j:4j+4], it adds x (a
// multiple of 4 long) lane by lane against w_j = w[j*stride:], then tail
// to lane 0 against the weights that follow, and writes
// h[j] = hs[j] + ((s0+s2) + (s1+s3)). (wt, the tail weights unit-major,
// serves the vector kernel.)
func hiddenUnits(h, hs, lanes, x, tail, w, _ []float64, stride int) {
	hiddenUnitsGo(h, hs, lanes, x, tail, w, stride)
}

// addRows adds, for every row r < rows and term s < terms in order,
// c·x[s*xs:][:n] to y[r*ys:][:n], where c = coef[r*cs+s*ci], skipping
// c = 0: the sums of gonum's Dgemm, element by element.
func addRows(y []float64, ys int, coef []float64, cs, ci int, x []float64, xs, rows, terms, n int) {
	addRowsGo(y, ys, coef, cs, ci, x, xs, rows, terms, n)
}

// backHead does, for each action a in order, with c = ds[a] and h_a the
// a-th row of h: gw2 += c·h_a, dpre_a = c·w2·(1 − h_a²), gb1 += dpre_a.
func backHead(gw2, gb1, w2, h, dpre, ds []float64) { backHeadGo(gw2, gb1, w2, h, dpre, ds) }

// embedSum writes Σ params[id*stride:][:len(x)] over ids into x.
func embedSum(x, params []float64, ids []int32, stride int) { embedSumGo(x, params, ids, stride) }

// hasAVX512: the transposed kernels are amd64 assembly.
const hasAVX512 = false

// lanesT and hiddenT serve the transposed layout, which needs hasAVX512.
func lanesT(lanes, x, wt []float64, units int) { lanesTGo(lanes, x, wt, units) }

func hiddenT(h, hs, lanes, x, tail, wt []float64) { hiddenTGo(h, hs, lanes, x, tail, wt) }

// scatterAdd adds t to g[id*stride:][:len(t)] for every id in order.
func scatterAdd(g, t []float64, ids []int32, stride int) { scatterAddGo(g, t, ids, stride) }
