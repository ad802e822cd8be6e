package policy

import "slices"

// maxCacheFloats bounds an actionCache (4 MiB); a full cache starts over.
const maxCacheFloats = 1 << 19

// actionCache keeps, per distinct list of embedded ids, what the forward
// pass computes from the action embedding alone: the embedding x_a and the
// lane sums of its block of the hidden pre-activations (see hiddenRow).
// The admissible actions of one episode, and of a batch, mostly recur, so
// most actions skip both. Entries belong to one parameter generation.
type actionCache struct {
	gen      uint64
	slots    table[int] // key of an id list → entry
	ids      []int32    // entry e's ids are ids[idOff[e]:idOff[e+1]]
	idOff    []int      // len = entries+1
	xa       []float64  // entry e: xa[e*D:(e+1)*D]
	lanes    []float64  // entry e: lanes[e*4H:(e+1)*4H]
	spareXa  []float64  // for an id list whose hash another list holds
	spareLns []float64
	tailW    []float64 // the generation's tail weights (see tailWeights)
	lin      []float64 // the generation's linear action weights, lin[r] = params[lay.lin(r)]
	wT       []float64 // the generation's W1a element-major, for the transposed kernels
	trans    bool      // the entries' lanes are lane-major (layout.transposed)
}

// use readies the cache for p's current parameters, dropping the entries
// of any other generation.
func (c *actionCache) use(p *Policy) {
	if c.idOff != nil && c.gen == *p.gen && c.trans == p.lay.transposed() {
		return
	}
	c.reset()
	c.gen, c.trans = *p.gen, p.lay.transposed()
	if c.trans {
		c.wT = grow(c.wT, p.lay.ina*p.lay.h)
		p.lay.transposedWeights(p.params, c.wT)
	}
	c.tailW = grow(c.tailW, (p.lay.ina%4)*p.lay.h)
	p.lay.tailWeights(p.params, c.tailW)
	c.lin = grow(c.lin, p.lay.buckets)
	for r := range c.lin {
		c.lin[r] = p.params[r*p.lay.row+p.lay.d]
	}
}

func (c *actionCache) reset() {
	c.slots.reset()
	c.ids, c.idOff = c.ids[:0], append(c.idOff[:0], 0)
	c.xa, c.lanes = c.xa[:0], c.lanes[:0]
}

// lookup returns the embedding and lane sums of the action embedded from
// ids, whose key is h (any function of ids will do: entries are checked),
// computing them on a miss.
func (c *actionCache) lookup(p *Policy, ids []int32, h uint64) (xa, lanes []float64) {
	l := &p.lay
	nl := 4 * l.h
	if e, ok := c.slots.get(h); ok {
		if slices.Equal(c.ids[c.idOff[e]:c.idOff[e+1]], ids) {
			return c.xa[e*l.d : (e+1)*l.d], c.lanes[e*nl : (e+1)*nl]
		}
		c.spareXa, c.spareLns = grow(c.spareXa, l.d), grow(c.spareLns, nl)
		p.actionShare(ids, c.spareXa, c.spareLns, c.wT)
		return c.spareXa, c.spareLns
	}
	if len(c.xa)+len(c.lanes)+l.d+nl > maxCacheFloats {
		c.reset()
	}
	e := len(c.idOff) - 1
	*c.slots.at(h) = e
	c.ids = append(c.ids, ids...)
	c.idOff = append(c.idOff, len(c.ids))
	c.xa = slices.Grow(c.xa, l.d)[:(e+1)*l.d]
	c.lanes = slices.Grow(c.lanes, nl)[:(e+1)*nl]
	xa, lanes = c.xa[e*l.d:], c.lanes[e*nl:]
	p.actionShare(ids, xa, lanes, c.wT)
	return xa, lanes
}

// actionShare computes an action's embedding and its lane sums.
func (p *Policy) actionShare(ids []int32, xa, lanes, wT []float64) {
	p.embed(ids, xa)
	p.lay.embedLanes(p.params, xa, lanes, wT)
}

func hashIDs(ids []int32) uint64 {
	h := uint64(len(ids))
	for _, id := range ids {
		h = mix(h, uint64(uint32(id)))
	}
	return h
}
