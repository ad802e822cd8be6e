package prm

import (
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
)

// The MLP head in batch form, on row-major float64 matrices: X holds n
// feature rows (n×dim), A the hidden activations (n×hidden).

func general(data []float64, rows, cols int) blas64.General {
	return blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: data[:rows*cols]}
}

// toFloat64 widens the float32 rows x into dst (grown as needed).
func toFloat64(dst []float64, x []float32) []float64 {
	dst = grow(dst, len(x))
	for i, v := range x {
		dst[i] = float64(v)
	}
	return dst
}

// forwardRows evaluates the n rows of X, leaving tanh hidden activations in
// A and r̂ in r.
func (m *Model) forwardRows(X []float64, n int, A, r []float64) {
	if n == 0 {
		return
	}
	w1, b1, w2, b2 := m.views()
	h := m.hidden
	hiddenSums(A, X, w1, n, h, m.dim)
	for i := range n {
		row := A[i*h : (i+1)*h]
		z := *b2
		for j := range row {
			row[j] = math.Tanh(row[j] + b1[j])
			z += w2[j] * row[j]
		}
		r[i] = math.Tanh(z)
	}
}

// hiddenSums sets A (n×h) to X W1ᵀ for the n rows of X (n×dim) and W1
// (h×dim), in one goroutine, with the arithmetic of blas64.Gemm(NoTrans,
// Trans) on them (so the same bits): each entry is a dot product of the
// whole rows, or, for a product gonum splits into 64×64 blocks
// (gemmBlocked), the sum of the dot products of their 64-long pieces, in
// order. Gonum would spread a large product over goroutines, and on a
// batch of a few hundred rows their start and wake-up cost more than the
// work.
func hiddenSums(A, X, W1 []float64, n, h, dim int) {
	piece := dim
	if gemmBlocked(n, h) {
		piece = 64
	}
	if !parallel(n, n*h*dim) { // no closure: scoring one step's actions allocates nothing
		hiddenSumsRows(A, X, W1, 0, n, h, dim, piece)
		return
	}
	split(n, func(lo, hi int) { hiddenSumsRows(A, X, W1, lo, hi, h, dim, piece) })
}

// hiddenSumsRows is hiddenSums for rows lo..hi, in pieces of piece
// columns.
func hiddenSumsRows(A, X, W1 []float64, lo, hi, h, dim, piece int) {
	for i := lo; i < hi; i++ {
		x := X[i*dim : (i+1)*dim]
		for j := range h {
			w := W1[j*dim : (j+1)*dim]
			var c float64
			for lo := 0; lo < dim; lo += piece {
				hi := min(lo+piece, dim)
				c += floats.Dot(x[lo:hi], w[lo:hi])
			}
			A[i*h+j] = c
		}
	}
}

// backwardRows sets grad (laid out like params) to the gradient of
// Σ_i g_i·r̂_i over the n rows of X, given their forward activations A and r.
// A is overwritten.
func (m *Model) backwardRows(X []float64, n int, A, r, g, grad []float64) {
	_, _, w2, _ := m.views()
	h, hd := m.hidden, m.hidden*m.dim
	gw1, gb1, gw2 := grad[:hd], grad[hd:hd+h], grad[hd+h:hd+2*h]
	clear(grad)
	var gb2 float64
	for i := range n {
		dz := g[i] * (1 - r[i]*r[i])
		gb2 += dz
		row := A[i*h : (i+1)*h]
		for j, a := range row {
			gw2[j] += dz * a
			da := dz * w2[j] * (1 - a*a)
			gb1[j] += da
			row[j] = da
		}
	}
	grad[len(grad)-1] = gb2
	outerSum(gw1, A, X, n, h, m.dim)
}

// outerSum sets G (h×dim) to Σ_l A_lᵀ X_l over the n rows of A (n×h) and
// X (n×dim) with the arithmetic of blas64.Gemm(Trans, NoTrans) on them (so
// the same bits): every entry summed row by row, in order, skipping zero
// entries of A. It runs in one goroutine over whole rows; gonum hands each
// 64-column block to a goroutine of its own, whose start and wake-up cost
// more than the work on a batch of a few hundred rows.
func outerSum(G, A, X []float64, n, h, dim int) {
	if !parallel(h, n*h*dim) {
		outerSumRows(G, A, X, n, h, dim, 0, h)
		return
	}
	split(h, func(lo, hi int) { outerSumRows(G, A, X, n, h, dim, lo, hi) })
}

// outerSumRows is outerSum for the rows lo..hi of G: each entry is summed
// over the n rows of A and X in order, whichever goroutine sums it.
func outerSumRows(G, A, X []float64, n, h, dim, lo, hi int) {
	clear(G[lo*dim : hi*dim])
	for l := range n {
		x := blas64.Vector{N: dim, Inc: 1, Data: X[l*dim : (l+1)*dim]}
		for i := lo; i < hi; i++ {
			if a := A[l*h+i]; a != 0 {
				blas64.Axpy(a, x, blas64.Vector{N: dim, Inc: 1, Data: G[i*dim : (i+1)*dim]})
			}
		}
	}
}

// parallelWork is the least multiply-adds a product needs before split
// spreads it over goroutines: below it their start costs more than the
// share of the work they take.
const parallelWork = 1 << 17

// parallel reports whether a product of n items and work multiply-adds
// is worth spreading over goroutines (split).
func parallel(n, work int) bool { return splitWorkers(n) >= 2 && work >= parallelWork }

// splitWorkers is how many goroutines split uses for n items: up to
// GOMAXPROCS, at most 4.
func splitWorkers(n int) int { return min(runtime.GOMAXPROCS(0), 4, n) }

// split runs fn over n items in contiguous ranges, one goroutine a range.
// Every item is computed alone and its arithmetic does not depend on the
// ranges, so the result is the same to the bit however the items are
// split.
func split(n int, fn func(lo, hi int)) {
	workers := splitWorkers(n)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*n/workers, (w+1)*n/workers
		wg.Go(func() { fn(lo, hi) })
	}
	wg.Wait()
}
