package policy

// Kernels for the dense layers. The hidden layer's pre-activations are
// computed one action at a time, in exactly the floating-point order of
// the matrix product they replace: gonum's Dgemm computes every entry as
// hs[j] + DotUnitary(z_a, W1a[j]), and DotUnitary
// (amd64) keeps four running sums — lane i%4 takes element i of each
// 4-element block, lane 0 takes the 1–3 elements past the last block — and
// returns (s0+s2)+(s1+s3). Computing each lane in that order gives the same
// bits; four lanes fit one AVX register (laneSums), and since the x_a block
// of z depends on the action's embedding alone, its lane sums are kept per
// distinct embedding (actionCache). With AVX-512 (layout.transposed) the
// same lane sums run transposed: a register holds one lane of eight
// units, against the weights element-major, and the lanes combine
// without shuffles; the cache then keeps its lanes lane-major.
//
// The scores take four actions at a time, each with its own running sums
// in its own order, and read the linear weights from a contiguous copy
// kept with the cache; tanh runs four or eight lanes at a time
// (tanhAll).
//
// The backward pass's products are sums of scaled rows, element by element
// (addRows, in YMM or ZMM registers), which any loop order over the rows
// reproduces as long as each element takes its terms in order; an
// embedding's gradient is added to each of its rows in id order
// (scatterAdd).
//
// Products are written float64(x*y) so that no compiler may fuse them into
// an FMA, which the assembly it mirrors does not do.

// gemmBlock and gemmMinPar are gonum's Dgemm blocking: a product with at
// least gemmMinPar blocks of gemmBlock rows × columns is split along the
// inner dimension too, which changes the order of the sums when that
// dimension exceeds gemmBlock.
const (
	gemmBlock  = 64
	gemmMinPar = 4
)

// rowsExact reports whether the per-action rows reproduce Dgemm's order for
// nA actions.
func (l *layout) rowsExact(nA int) bool {
	blocks := func(n int) int { return (n + gemmBlock - 1) / gemmBlock }
	return l.ina <= gemmBlock || blocks(nA)*blocks(l.h) < gemmMinPar
}

// transposed reports whether the hidden layer runs the transposed kernels
// (AVX-512): lane sums kept lane-major, lanes[k*H+j] for lane k of unit j,
// against the weights element-major (transposedWeights). Their sums are
// the same, in the same order.
func (l *layout) transposed() bool { return hasAVX512 && l.h%16 == 0 && l.d&3 == 0 }

// transposedWeights writes W1a element-major: wt[i*H+j] = W1a[j][i].
func (l *layout) transposedWeights(params, wt []float64) {
	for j := range l.h {
		for i, v := range params[l.w1+j*l.in+l.d : l.w1+(j+1)*l.in] {
			wt[i*l.h+j] = v
		}
	}
}

// embedLanes writes, for every hidden unit j, the four lane sums of
// z[:D]·W1a[j][:D] (z[:D] = x_a) into lanes[4j:4j+4], or lane-major when
// l.transposed() (wt: see transposedWeights).
func (l *layout) embedLanes(params, xa, lanes, wt []float64) {
	clear(lanes)
	if l.transposed() {
		lanesT(lanes, xa, wt, l.h)
		return
	}
	if l.d&3 == 0 {
		laneSums(lanes, xa, params[l.w1+l.d:], l.in, l.h)
		return
	}
	for j := range l.h {
		addLanes((*[4]float64)(lanes[4*j:4*j+4]), xa, params[l.w1+j*l.in+l.d:], 0)
	}
}

// hiddenRow writes h[j] = hs[j] + z·W1a[j] for every unit j, starting
// from the lane sums of the x_a block; acc is scratch of 4H, wt the tail
// weights unit-major (see tailWeights) and wT all weights element-major
// (see transposedWeights, for l.transposed()).
func (l *layout) hiddenRow(params, z, lanes, acc, hs, h, wt, wT []float64) {
	d, n4 := l.d, l.ina&^3
	if l.transposed() {
		hiddenT(h, hs, lanes, z[d:n4], z[n4:l.ina], wT[d*l.h:])
		return
	}
	w := params[l.w1+2*d:] // W1a[0][D:]
	if d&3 == 0 {
		hiddenUnits(h, hs, lanes, z[d:n4], z[n4:l.ina], w, wt, l.in)
		return
	}
	copy(acc, lanes)
	for j := range l.h {
		addLanes((*[4]float64)(acc[4*j:4*j+4]), z[d:n4], w[j*l.in:], d)
	}
	hiddenUnitsGo(h, hs, acc, nil, z[n4:l.ina], params[l.w1+d+n4:], l.in)
}

// tailWeights writes the weights of the inputs past the last 4-element
// block of z (the last flags) unit-major: wt[t*H+j] = W1a[j][n4+t].
func (l *layout) tailWeights(params, wt []float64) {
	n4 := l.ina &^ 3
	for j := range l.h {
		for t := range l.ina - n4 {
			wt[t*l.h+j] = params[l.w1+j*l.in+l.d+n4+t]
		}
	}
}

// hiddenUnitsGo is hiddenUnits without vector instructions.
func hiddenUnitsGo(h, hs, lanes, x, tail, w []float64, stride int) {
	for j := range h {
		wj := w[j*stride : j*stride+len(x)+len(tail)]
		s := [4]float64(lanes[4*j : 4*j+4])
		s = sum4(s, x, wj)
		s0 := s[0]
		for t, v := range tail {
			s0 += float64(v * wj[len(x)+t])
		}
		h[j] = hs[j] + ((s0 + s[2]) + (s[1] + s[3]))
	}
}

// lanesTGo is lanesT without vector instructions.
func lanesTGo(lanes, x, wt []float64, units int) {
	for i, v := range x {
		k := i & 3
		for j, w := range wt[i*units : (i+1)*units] {
			lanes[k*units+j] += float64(v * w)
		}
	}
}

// hiddenTGo is hiddenT without vector instructions.
func hiddenTGo(h, hs, lanes, x, tail, wt []float64) {
	units := len(h)
	for j := range h {
		s := [4]float64{lanes[j], lanes[units+j], lanes[2*units+j], lanes[3*units+j]}
		for i, v := range x {
			s[i&3] += float64(v * wt[i*units+j])
		}
		for t, v := range tail {
			s[0] += float64(v * wt[(len(x)+t)*units+j])
		}
		h[j] = hs[j] + ((s[0] + s[2]) + (s[1] + s[3]))
	}
}

// sum4 adds x·w to the lanes s, lane i taking x[4b+i]·w[4b+i] for
// b = 0, 1, ... in order; len(x) is a multiple of 4.
func sum4(s [4]float64, x, w []float64) [4]float64 {
	s0, s1, s2, s3 := s[0], s[1], s[2], s[3]
	w = w[:len(x)]
	for i := 0; i+3 < len(x); i += 4 {
		s0 += float64(x[i] * w[i])
		s1 += float64(x[i+1] * w[i+1])
		s2 += float64(x[i+2] * w[i+2])
		s3 += float64(x[i+3] * w[i+3])
	}
	return [4]float64{s0, s1, s2, s3}
}

// laneSumsGo is laneSums without vector instructions.
func laneSumsGo(acc, x, w []float64, stride, h int) {
	for j := range h {
		s := (*[4]float64)(acc[4*j : 4*j+4])
		*s = sum4(*s, x, w[j*stride:])
	}
}

// addLanes adds x·w to the lanes s, element i to lane (k0+i)%4; x must
// lie below the last 4-element block of the vector it is part of.
func addLanes(s *[4]float64, x, w []float64, k0 int) {
	w = w[:len(x)]
	for i, v := range x {
		s[(k0+i)&3] += float64(v * w[i])
	}
}

// addRowsGo is addRows without vector instructions.
func addRowsGo(y []float64, ys int, coef []float64, cs, ci int, x []float64, xs, rows, terms, n int) {
	for r := range rows {
		yr := y[r*ys : r*ys+n]
		for s := range terms {
			c := coef[r*cs+s*ci]
			if c == 0 {
				continue
			}
			for i, v := range x[s*xs : s*xs+n] {
				yr[i] += float64(c * v)
			}
		}
	}
}

// backHeadGo is backHead without vector instructions: the loop the
// backward pass always ran.
func backHeadGo(gw2, gb1, w2, h, dpre, ds []float64) {
	units := len(w2)
	for a, c := range ds {
		ha, da := h[a*units:(a+1)*units], dpre[a*units:(a+1)*units]
		for i, hv := range ha {
			gw2[i] += c * hv
			da[i] = c * w2[i] * (1 - hv*hv)
			gb1[i] += da[i]
		}
	}
}

// embedSumGo is embedSum without vector instructions.
func embedSumGo(x, params []float64, ids []int32, stride int) {
	clear(x)
	for _, id := range ids {
		e := params[int(id)*stride : int(id)*stride+len(x)]
		for i, v := range e {
			x[i] += v
		}
	}
}

// scatterAddGo is scatterAdd without vector instructions.
func scatterAddGo(g, t []float64, ids []int32, stride int) {
	for _, id := range ids {
		e := g[int(id)*stride : int(id)*stride+len(t)]
		for i, v := range t {
			e[i] += v
		}
	}
}
