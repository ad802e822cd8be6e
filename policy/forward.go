package policy

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Pass holds one forward pass over a state: the distribution, the value,
// and the activations the backward pass needs. Reuse a Pass across calls to
// avoid allocation; it is not safe for concurrent use.
type Pass struct {
	// LogProbs and Probs are the distribution over the admissible actions.
	LogProbs []float64
	Probs    []float64
	// Value is the value head's estimate V(s).
	Value float64

	f      *Features
	temp   float64
	valued bool        // the value head's activations are those of f
	xs     []float64   // D: state embedding
	xa     []float64   // nA×D: action embeddings
	z      []float64   // nA×InA: per-action MLP inputs [x_a, x_s⊙x_a, flags]
	hs     []float64   // H: the state's share of the MLP pre-activation, b1 + W1[:, :D]·x_s
	h      []float64   // nA×H: MLP hidden activations (after tanh)
	vh     []float64   // H: value hidden activations (after tanh)
	cache  actionCache // per-embedding results of the current parameters
	acc    []float64   // 4H lane sums of the action in hand
	// scratch for the backward pass
	dpre []float64 // nA×H
	dz   []float64 // nA×2D: ∂z's x_a and x_s⊙x_a columns
	dxs  []float64 // D
	dxa  []float64 // D
	dvh  []float64 // H
	ds   []float64 // nA: ∂L/∂score
	dxe  []float64 // D: a row's share of ∂x
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

func (ps *Pass) size(l *layout, nA int) {
	ps.LogProbs = grow(ps.LogProbs, nA)
	ps.Probs = grow(ps.Probs, nA)
	ps.xs = grow(ps.xs, l.d)
	ps.xa = grow(ps.xa, nA*l.d)
	ps.z = grow(ps.z, nA*l.ina)
	ps.hs = grow(ps.hs, l.h)
	ps.h = grow(ps.h, nA*l.h)
	ps.vh = grow(ps.vh, l.h)
}

// Forward computes the distribution and value of the state f describes
// into ps, keeping the activations for Backward.
func (p *Policy) Forward(f *Features, ps *Pass) {
	p.distribution(f, ps)
	ps.Value, ps.valued = p.value(f.state, ps), true
}

// ForwardActions is Forward without the value head, for callers that need
// only the distribution; ps.Value is left as it was (Backward computes the
// head if it is given a value gradient).
func (p *Policy) ForwardActions(f *Features, ps *Pass) { p.distribution(f, ps) }

// distribution is ForwardActions.
func (p *Policy) distribution(f *Features, ps *Pass) {
	ps.valued = false
	l := &p.lay
	nA := f.NumActions()
	ps.size(l, nA)
	ps.f, ps.temp = f, p.cfg.Temperature
	p.embed(f.state, ps.xs)
	p.stateShare(ps)
	if exactKernels && l.rowsExact(nA) {
		p.hiddenRows(f, ps)
	} else {
		p.hiddenGemm(f, ps)
	}
	tanhAll(ps.h)
	p.scores(f, ps)
	logSoftmax(ps.LogProbs, ps.Probs)
}

// embed writes (1/√n)·Σ emb[id] into x.
func (p *Policy) embed(ids []int32, x []float64) {
	clear(x)
	if len(ids) == 0 {
		return
	}
	embedSum(x, p.params, ids, p.lay.row)
	s := 1 / math.Sqrt(float64(len(ids)))
	for i := range x {
		x[i] *= s
	}
}

// stateShare computes the state's share of the MLP pre-activation,
// hs = b1 + W1[:, :D]·x_s.
func (p *Policy) stateShare(ps *Pass) {
	l := &p.lay
	copy(ps.hs, p.params[l.b1:l.b1+l.h])
	blas64.Gemv(blas.NoTrans, 1, p.w1State(), blas64.Vector{N: l.d, Data: ps.xs, Inc: 1},
		1, blas64.Vector{N: l.h, Data: ps.hs, Inc: 1})
}

// input writes action a's embedding xa into ps.xa and its MLP input
// z = [x_a, x_s⊙x_a, flags] into ps.z. The loops beat copy's calls at
// these lengths.
func (p *Policy) input(f *Features, ps *Pass, a int, xa []float64) {
	l := &p.lay
	z := ps.z[a*l.ina : (a+1)*l.ina]
	dst, mid, xs := ps.xa[a*l.d:(a+1)*l.d], z[l.d:2*l.d], ps.xs[:l.d]
	for i, v := range xa[:l.d] {
		dst[i], z[i], mid[i] = v, v, xs[i]*v
	}
	fl := z[2*l.d:]
	for i, v := range f.Flags(a) {
		fl[i] = v
	}
}

// hiddenRows computes the pre-activations W1·[x_s, z_a] + b1 of every
// action row by row, reusing what the action cache holds (see hiddenRow).
func (p *Policy) hiddenRows(f *Features, ps *Pass) {
	l := &p.lay
	ps.cache.use(p)
	ps.acc = grow(ps.acc, 4*l.h)
	for a := range f.NumActions() {
		xa, lanes := ps.cache.lookup(p, f.embedded(a), f.embKey(a))
		p.input(f, ps, a, xa)
		l.hiddenRow(p.params, ps.z[a*l.ina:(a+1)*l.ina], lanes, ps.acc, ps.hs, ps.h[a*l.h:(a+1)*l.h], ps.cache.tailW, ps.cache.wT)
	}
}

// hiddenGemm computes the pre-activations of all actions with one matrix
// product, for shapes whose product hiddenRow does not reproduce.
func (p *Policy) hiddenGemm(f *Features, ps *Pass) {
	l := &p.lay
	nA := f.NumActions()
	for a := range nA {
		xa := ps.xa[a*l.d : (a+1)*l.d]
		p.embed(f.embedded(a), xa)
		p.input(f, ps, a, xa)
		copy(ps.h[a*l.h:(a+1)*l.h], ps.hs)
	}
	blas64.Gemm(blas.NoTrans, blas.Trans, 1,
		blas64.General{Rows: nA, Cols: l.ina, Data: ps.z, Stride: l.ina},
		p.w1Action(), 1, blas64.General{Rows: nA, Cols: l.h, Data: ps.h, Stride: l.h})
}

// w1State is the block of W1 that multiplies x_s (H×D, strided).
func (p *Policy) w1State() blas64.General { return w1State(&p.lay, p.params) }

// w1Action is the block of W1 that multiplies the per-action inputs (H×InA, strided).
func (p *Policy) w1Action() blas64.General { return w1Action(&p.lay, p.params) }

func w1State(l *layout, v []float64) blas64.General {
	return blas64.General{Rows: l.h, Cols: l.d, Data: v[l.w1 : l.w1+l.h*l.in], Stride: l.in}
}

func w1Action(l *layout, v []float64) blas64.General {
	return blas64.General{Rows: l.h, Cols: l.ina, Data: v[l.w1+l.d : l.w1+l.h*l.in], Stride: l.in}
}

// scores writes each action's logit, score/T, into ps.LogProbs: score =
// w2·h_a + wf·flags_a, then the linear weights of the action's ids in
// order. Four actions at a time keep their own sums, so that the chains
// of additions overlap; each still adds its terms in that order. The
// linear weights are read from the cache's contiguous copy.
func (p *Policy) scores(f *Features, ps *Pass) {
	l := &p.lay
	ps.cache.use(p)
	w2 := p.params[l.w2 : l.w2+l.h]
	wf := p.params[l.wf : l.wf+NumFlags]
	lin := ps.cache.lin
	nA := len(ps.LogProbs)
	a := 0
	for ; a+3 < nA; a += 4 {
		h := ps.h[a*l.h : (a+4)*l.h]
		var s [4]float64
		s[0], s[1], s[2], s[3] = dot4(w2, h[:l.h], h[l.h:2*l.h], h[2*l.h:3*l.h], h[3*l.h:])
		fl := f.flags[a*NumFlags : (a+4)*NumFlags]
		f0, f1, f2, f3 := dot4(wf, fl[:NumFlags], fl[NumFlags:2*NumFlags], fl[2*NumFlags:3*NumFlags], fl[3*NumFlags:])
		s[0], s[1], s[2], s[3] = s[0]+f0, s[1]+f1, s[2]+f2, s[3]+f3
		linear4(&s, lin, f.actIDs, f.actOff[a:a+5])
		for k, v := range s {
			ps.LogProbs[a+k] = v / ps.temp
		}
	}
	for ; a < nA; a++ {
		s := dot(w2, ps.h[a*l.h:(a+1)*l.h]) + dot(wf, f.Flags(a))
		for _, id := range f.linear(a) {
			s += lin[id]
		}
		ps.LogProbs[a] = s / ps.temp
	}
}

// dot4 is dot(w, x_k) for four vectors x_k as long as w.
func dot4(w, x0, x1, x2, x3 []float64) (s0, s1, s2, s3 float64) {
	x0, x1, x2, x3 = x0[:len(w)], x1[:len(w)], x2[:len(w)], x3[:len(w)]
	for i, v := range w {
		s0 += v * x0[i] // as dot writes it, so that any fusing is dot's
		s1 += v * x1[i]
		s2 += v * x2[i]
		s3 += v * x3[i]
	}
	return s0, s1, s2, s3
}

// linear4 adds to s[k] the weights lin[id] of the ids
// ids[off[k]:off[k+1]] in order, the four lists in step while all last.
func linear4(s *[4]float64, lin []float64, ids, off []int32) {
	i0, i1, i2, i3 := ids[off[0]:off[1]], ids[off[1]:off[2]], ids[off[2]:off[3]], ids[off[3]:off[4]]
	n := min(len(i0), len(i1), len(i2), len(i3))
	s0, s1, s2, s3 := s[0], s[1], s[2], s[3]
	i0, i1, i2, i3 = i0[:n:len(i0)], i1[:n:len(i1)], i2[:n:len(i2)], i3[:n:len(i3)]
	for j, id := range i0 {
		s0 += lin[id]
		s1 += lin[i1[j]]
		s2 += lin[i2[j]]
		s3 += lin[i3[j]]
	}
	for _, id := range i0[n:cap(i0)] {
		s0 += lin[id]
	}
	for _, id := range i1[n:cap(i1)] {
		s1 += lin[id]
	}
	for _, id := range i2[n:cap(i2)] {
		s2 += lin[id]
	}
	for _, id := range i3[n:cap(i3)] {
		s3 += lin[id]
	}
	*s = [4]float64{s0, s1, s2, s3}
}

// value computes V(s) = wv·tanh(Wv·x_s + bv) + cv + mean(vlin[state ids]).
func (p *Policy) value(state []int32, ps *Pass) float64 {
	l := &p.lay
	copy(ps.vh, p.params[l.bv:l.bv+l.h])
	blas64.Gemv(blas.NoTrans, 1,
		blas64.General{Rows: l.h, Cols: l.d, Data: p.params[l.wv : l.wv+l.h*l.d], Stride: l.d},
		blas64.Vector{N: l.d, Data: ps.xs, Inc: 1}, 1, blas64.Vector{N: l.h, Data: ps.vh, Inc: 1})
	tanhAll(ps.vh)
	v := dot(p.params[l.wv2:l.wv2+l.h], ps.vh) + p.params[l.cv]
	if len(state) > 0 {
		lin := 0.0
		for _, id := range state {
			lin += p.params[l.vlin(id)]
		}
		v += lin / float64(len(state))
	}
	return v
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// logSoftmax turns the logits in lp into log-probabilities in place and
// writes the probabilities into pr.
func logSoftmax(lp, pr []float64) {
	m := math.Inf(-1)
	for _, v := range lp {
		m = max(m, v)
	}
	sum := 0.0
	for _, v := range lp {
		sum += math.Exp(v - m)
	}
	lse := m + math.Log(sum)
	for i, v := range lp {
		lp[i] = v - lse
		pr[i] = math.Exp(lp[i])
	}
}
