package policy

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Backward adds to g the gradient of a loss L through the forward pass ps,
// given dLogits[a] = ∂L/∂logit_a (logit_a = score_a/T, before the softmax;
// see SoftmaxGrad) and dValue = ∂L/∂V. It returns ErrShape if g belongs to
// another configuration.
func (p *Policy) Backward(ps *Pass, dLogits []float64, dValue float64, g *Grads) error {
	if g.lay != p.lay || len(dLogits) != ps.f.NumActions() {
		return ErrShape
	}
	l := &p.lay
	ps.dxs = grow(ps.dxs, l.d)
	clear(ps.dxs)
	if anyNonZero(dLogits) {
		p.backScores(ps, dLogits, g)
	}
	if dValue != 0 {
		if !ps.valued { // after ForwardActions
			ps.Value, ps.valued = p.value(ps.f.state, ps), true
		}
		p.backValue(ps, dValue, g)
	}
	p.backEmbed(ps.f.state, ps.dxs, g, ps)
	return nil
}

// backScores propagates ∂L/∂logit through the scores, the MLP and the
// action embeddings, leaving ∂L/∂x_s in ps.dxs.
func (p *Policy) backScores(ps *Pass, dLogits []float64, g *Grads) {
	l := &p.lay
	f := ps.f
	nA := len(dLogits)
	ps.dpre = grow(ps.dpre, nA*l.h)
	ps.dz = grow(ps.dz, nA*2*l.d)
	ps.ds = grow(ps.ds, nA)
	for a, dl := range dLogits {
		ps.ds[a] = dl / ps.temp
	}
	// The units' sums, then the flags' and the linear weights': each
	// accumulator still takes the actions in order.
	backHead(g.data[l.w2:l.w2+l.h], g.data[l.b1:l.b1+l.h], p.params[l.w2:l.w2+l.h], ps.h, ps.dpre, ps.ds)
	gwf := g.data[l.wf : l.wf+NumFlags]
	for a, ds := range ps.ds {
		for i, fv := range f.Flags(a) {
			gwf[i] += ds * fv
		}
		for _, id := range f.linear(a) {
			g.rows.add(id)
			g.data[l.lin(id)] += ds
		}
	}
	p.backHidden(ps, nA, g)
	p.backStateShare(ps, nA, g)
	ps.dxa = grow(ps.dxa, l.d)
	dxa, dw := ps.dxa, 2*l.d
	for a := range nA {
		dz := ps.dz[a*dw : (a+1)*dw]
		xa := ps.xa[a*l.d : (a+1)*l.d]
		for i := range l.d {
			ps.dxs[i] += dz[l.d+i] * xa[i]
			dxa[i] = dz[i] + dz[l.d+i]*ps.xs[i]
		}
		p.backEmbed(f.embedded(a), dxa, g, ps)
	}
}

// backHidden adds ∂W1a = dpreᵀ·z to g and writes ∂z = dpre·W1a into
// ps.dz, as Dgemm sums them; only the x_a and x_s⊙x_a columns of ∂z, the
// ones read, are computed.
func (p *Policy) backHidden(ps *Pass, nA int, g *Grads) {
	l := &p.lay
	dw := 2 * l.d
	clear(ps.dz[:nA*dw])
	if exactKernels {
		addRows(g.data[l.w1+l.d:], l.in, ps.dpre, 1, l.h, ps.z, l.ina, l.h, nA, l.ina)
		addRows(ps.dz, dw, ps.dpre, l.h, 1, p.params[l.w1+l.d:], l.in, nA, l.h, dw)
		return
	}
	dpre := blas64.General{Rows: nA, Cols: l.h, Data: ps.dpre, Stride: l.h}
	z := blas64.General{Rows: nA, Cols: l.ina, Data: ps.z, Stride: l.ina}
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, dpre, z, 1, w1Action(l, g.data))
	w1a := p.w1Action()
	w1a.Cols = dw
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, dpre, w1a, 0, blas64.General{Rows: nA, Cols: dw, Data: ps.dz, Stride: dw})
}

// backStateShare propagates the summed pre-activation gradient through the
// x_s block of W1: ∂W1[:, :D] += (Σ_a dpre_a)·x_sᵀ, ∂x_s += W1[:, :D]ᵀ·Σ_a dpre_a.
func (p *Policy) backStateShare(ps *Pass, nA int, g *Grads) {
	l := &p.lay
	ps.dvh = grow(ps.dvh, l.h) // scratch: Σ_a dpre_a
	sum := ps.dvh
	clear(sum)
	for a := range nA {
		for i, v := range ps.dpre[a*l.h : (a+1)*l.h] {
			sum[i] += v
		}
	}
	blas64.Ger(1, blas64.Vector{N: l.h, Data: sum, Inc: 1}, blas64.Vector{N: l.d, Data: ps.xs, Inc: 1}, w1State(l, g.data))
	blas64.Gemv(blas.Trans, 1, p.w1State(), blas64.Vector{N: l.h, Data: sum, Inc: 1},
		1, blas64.Vector{N: l.d, Data: ps.dxs, Inc: 1})
}

// backValue propagates ∂L/∂V through the value head, adding ∂L/∂x_s to ps.dxs.
func (p *Policy) backValue(ps *Pass, dv float64, g *Grads) {
	l := &p.lay
	state := ps.f.state
	g.data[l.cv] += dv
	if len(state) > 0 {
		dlin := dv / float64(len(state))
		for _, id := range state {
			g.rows.add(id)
			g.data[l.vlin(id)] += dlin
		}
	}
	ps.dvh = grow(ps.dvh, l.h)
	wv2 := p.params[l.wv2 : l.wv2+l.h]
	gwv2, gbv := g.data[l.wv2:l.wv2+l.h], g.data[l.bv:l.bv+l.h]
	for i, hv := range ps.vh {
		gwv2[i] += dv * hv
		ps.dvh[i] = dv * wv2[i] * (1 - hv*hv)
		gbv[i] += ps.dvh[i]
	}
	gwv := g.data[l.wv : l.wv+l.h*l.d]
	wv := p.params[l.wv : l.wv+l.h*l.d]
	for i, d := range ps.dvh {
		for j := range l.d {
			gwv[i*l.d+j] += d * ps.xs[j]
			ps.dxs[j] += d * wv[i*l.d+j]
		}
	}
}

// backEmbed adds ∂L/∂x to the rows x = (1/√n)·Σ emb[id] was built from.
func (p *Policy) backEmbed(ids []int32, dx []float64, g *Grads, ps *Pass) {
	if len(ids) == 0 || !anyNonZero(dx) {
		return
	}
	l := &p.lay
	s := 1 / math.Sqrt(float64(len(ids)))
	if fusesMulAdd { // e[i] + v*s may be one fused operation
		for _, id := range ids {
			g.rows.add(id)
			e := g.data[l.emb(id) : l.emb(id)+l.d]
			for i, v := range dx {
				e[i] += v * s
			}
		}
		return
	}
	// Every row takes the same products: compute them once.
	ps.dxe = grow(ps.dxe, len(dx))
	t := ps.dxe
	for i, v := range dx {
		t[i] = v * s
	}
	for _, id := range ids {
		g.rows.add(id)
	}
	scatterAdd(g.data, t, ids, l.row)
}

func anyNonZero(v []float64) bool {
	for _, x := range v {
		if x != 0 {
			return true
		}
	}
	return false
}
