package prm

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
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
	blas64.Gemm(blas.NoTrans, blas.Trans, 1, general(X, n, m.dim), general(w1, h, m.dim), 0, general(A, n, h))
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
	if n > 0 {
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, general(A, n, h), general(X, n, m.dim), 0, general(gw1, h, m.dim))
	}
}
