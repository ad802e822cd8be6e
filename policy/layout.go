package policy

// layout places every parameter tensor in one flat []float64, so that
// cloning, gradient norms, Adam and snapshots work on plain slices.
//
// The sparse part comes first: one row of width D+2 per hashed feature
// bucket holding its embedding (D), its linear action weight and its linear
// value weight. The dense part follows: the scoring MLP (W1 H×In, b1 H,
// w2 H), the flag weights (NumFlags) and the value head (Wv H×D, bv H, wv H,
// cv 1). In = 3D + NumFlags: [x_s, x_a, x_s⊙x_a, flags].
type layout struct {
	buckets, d, h, in int
	ina               int // per-action MLP inputs: In − D
	row               int // width of a sparse row
	sparse            int // length of the sparse part
	w1, b1, w2, wf    int // offsets into the flat vector
	wv, bv, wv2, cv   int
	total             int
}

func newLayout(c Config) layout {
	l := layout{buckets: c.Buckets, d: c.EmbedDim, h: c.Hidden}
	l.in = 3*l.d + NumFlags
	l.ina = l.in - l.d
	l.row = l.d + 2
	l.sparse = l.buckets * l.row
	off := l.sparse
	next := func(n int) int { o := off; off += n; return o }
	l.w1 = next(l.h * l.in)
	l.b1 = next(l.h)
	l.w2 = next(l.h)
	l.wf = next(NumFlags)
	l.wv = next(l.h * l.d)
	l.bv = next(l.h)
	l.wv2 = next(l.h)
	l.cv = next(1)
	l.total = off
	return l
}

// emb, lin and vlin locate a bucket row's parts.
func (l *layout) emb(r int32) int  { return int(r) * l.row }
func (l *layout) lin(r int32) int  { return int(r)*l.row + l.d }
func (l *layout) vlin(r int32) int { return int(r)*l.row + l.d + 1 }
