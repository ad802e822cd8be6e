package policy

import "math"

// Grads accumulates the gradient of a loss with respect to a policy's
// parameters. Only the feature rows actually used are touched, so zeroing
// and norms cost what the batch used, not the table size.
type Grads struct {
	lay  layout
	data []float64
	rows rowSet
}

// NewGrads returns a zero gradient shaped like p.
func (p *Policy) NewGrads() *Grads {
	return &Grads{lay: p.lay, data: make([]float64, p.lay.total), rows: newRowSet(p.lay.buckets)}
}

// Zero resets the gradient.
func (g *Grads) Zero() {
	l := &g.lay
	for _, r := range g.rows.list {
		clear(g.data[l.emb(r) : l.emb(r)+l.row])
	}
	g.rows.clear()
	clear(g.data[l.sparse:])
}

// Norm is the gradient's Euclidean norm.
func (g *Grads) Norm() float64 {
	s := 0.0
	g.each(func(v []float64) {
		for _, x := range v {
			s += x * x
		}
	})
	return math.Sqrt(s)
}

// Scale multiplies the gradient by c.
func (g *Grads) Scale(c float64) {
	g.each(func(v []float64) {
		for i := range v {
			v[i] *= c
		}
	})
}

// ClipNorm scales the gradient down to norm maxNorm if it is larger, and
// returns the norm before clipping. maxNorm ≤ 0 disables clipping.
func (g *Grads) ClipNorm(maxNorm float64) float64 {
	n := g.Norm()
	if maxNorm > 0 && n > maxNorm {
		g.Scale(maxNorm / n)
	}
	return n
}

// each calls fn on every part of the gradient that may be non-zero.
func (g *Grads) each(fn func([]float64)) {
	l := &g.lay
	for _, r := range g.rows.list {
		fn(g.data[l.emb(r) : l.emb(r)+l.row])
	}
	fn(g.data[l.sparse:])
}

// At returns component i of the gradient, in the order of Policy.Param.
func (g *Grads) At(i int) float64 { return g.data[i] }

// Add adds o to g. It returns ErrShape if their shapes differ. Summing
// per-goroutine gradients with Add in a fixed order keeps a parallel
// computation deterministic.
func (g *Grads) Add(o *Grads) error {
	if g.lay != o.lay {
		return ErrShape
	}
	l := &g.lay
	for _, r := range o.rows.list {
		g.rows.add(r)
		dst, src := g.data[l.emb(r):l.emb(r)+l.row], o.data[l.emb(r):l.emb(r)+l.row]
		for i, v := range src {
			dst[i] += v
		}
	}
	dst, src := g.data[l.sparse:], o.data[l.sparse:]
	for i, v := range src {
		dst[i] += v
	}
	return nil
}
