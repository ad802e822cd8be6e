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
		p.backValue(ps, dValue, g)
	}
	p.backEmbed(ps.f.state, ps.dxs, g)
	return nil
}

// backScores propagates ∂L/∂logit through the scores, the MLP and the
// action embeddings, leaving ∂L/∂x_s in ps.dxs.
func (p *Policy) backScores(ps *Pass, dLogits []float64, g *Grads) {
	l := &p.lay
	f := ps.f
	nA := len(dLogits)
	ps.dpre = grow(ps.dpre, nA*l.h)
	ps.dz = grow(ps.dz, nA*l.in)
	w2 := p.params[l.w2 : l.w2+l.h]
	gw2, gwf := g.data[l.w2:l.w2+l.h], g.data[l.wf:l.wf+NumFlags]
	gb1 := g.data[l.b1 : l.b1+l.h]
	for a, dl := range dLogits {
		ds := dl / ps.temp
		h := ps.h[a*l.h : (a+1)*l.h]
		dpre := ps.dpre[a*l.h : (a+1)*l.h]
		for i, hv := range h {
			gw2[i] += ds * hv
			dpre[i] = ds * w2[i] * (1 - hv*hv)
			gb1[i] += dpre[i]
		}
		for i, fv := range f.Flags(a) {
			gwf[i] += ds * fv
		}
		for _, id := range f.actIDs[f.actOff[a]:f.actOff[a+1]] {
			g.rows.add(id)
			g.data[l.lin(id)] += ds
		}
	}
	dpre := blas64.General{Rows: nA, Cols: l.h, Data: ps.dpre, Stride: l.h}
	z := blas64.General{Rows: nA, Cols: l.in, Data: ps.z, Stride: l.in}
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, dpre, z, 1,
		blas64.General{Rows: l.h, Cols: l.in, Data: g.data[l.w1 : l.w1+l.h*l.in], Stride: l.in})
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, dpre,
		blas64.General{Rows: l.h, Cols: l.in, Data: p.params[l.w1 : l.w1+l.h*l.in], Stride: l.in},
		0, blas64.General{Rows: nA, Cols: l.in, Data: ps.dz, Stride: l.in})
	ps.dxa = grow(ps.dxa, l.d)
	dxa := ps.dxa
	for a := range nA {
		dz := ps.dz[a*l.in : (a+1)*l.in]
		xa := ps.xa[a*l.d : (a+1)*l.d]
		for i := range l.d {
			ps.dxs[i] += dz[i] + dz[2*l.d+i]*xa[i]
			dxa[i] = dz[l.d+i] + dz[2*l.d+i]*ps.xs[i]
		}
		p.backEmbed(f.actIDs[f.actOff[a]:f.actOff[a+1]], dxa, g)
	}
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
func (p *Policy) backEmbed(ids []int32, dx []float64, g *Grads) {
	if len(ids) == 0 || !anyNonZero(dx) {
		return
	}
	l := &p.lay
	s := 1 / math.Sqrt(float64(len(ids)))
	for _, id := range ids {
		g.rows.add(id)
		e := g.data[l.emb(id) : l.emb(id)+l.d]
		for i, v := range dx {
			e[i] += v * s
		}
	}
}

func anyNonZero(v []float64) bool {
	for _, x := range v {
		if x != 0 {
			return true
		}
	}
	return false
}
