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
	slots    keyTable  // key of an id list → entry
	ids      []int32   // entry e's ids are ids[idOff[e]:idOff[e+1]]
	idOff    []int     // len = entries+1
	xa       []float64 // entry e: xa[e*D:(e+1)*D]
	lanes    []float64 // entry e: lanes[e*4H:(e+1)*4H]
	spareXa  []float64 // for an id list whose hash another list holds
	spareLns []float64
	tailW    []float64 // the generation's tail weights (see tailWeights)
}

// use readies the cache for p's current parameters, dropping the entries
// of any other generation.
func (c *actionCache) use(p *Policy) {
	if c.idOff != nil && c.gen == *p.gen {
		return
	}
	c.reset()
	c.gen = *p.gen
	c.tailW = grow(c.tailW, (p.lay.ina%4)*p.lay.h)
	p.lay.tailWeights(p.params, c.tailW)
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
	if e, ok := c.slots.find(h); ok {
		if slices.Equal(c.ids[c.idOff[e]:c.idOff[e+1]], ids) {
			return c.xa[e*l.d : (e+1)*l.d], c.lanes[e*nl : (e+1)*nl]
		}
		c.spareXa, c.spareLns = grow(c.spareXa, l.d), grow(c.spareLns, nl)
		p.actionShare(ids, c.spareXa, c.spareLns)
		return c.spareXa, c.spareLns
	}
	if len(c.xa)+len(c.lanes)+l.d+nl > maxCacheFloats {
		c.reset()
	}
	e := len(c.idOff) - 1
	c.slots.insert(h, e)
	c.ids = append(c.ids, ids...)
	c.idOff = append(c.idOff, len(c.ids))
	c.xa = slices.Grow(c.xa, l.d)[:(e+1)*l.d]
	c.lanes = slices.Grow(c.lanes, nl)[:(e+1)*nl]
	xa, lanes = c.xa[e*l.d:], c.lanes[e*nl:]
	p.actionShare(ids, xa, lanes)
	return xa, lanes
}

// actionShare computes an action's embedding and its lane sums.
func (p *Policy) actionShare(ids []int32, xa, lanes []float64) {
	p.embed(ids, xa)
	p.lay.embedLanes(p.params, xa, lanes)
}

func hashIDs(ids []int32) uint64 {
	h := uint64(len(ids))
	for _, id := range ids {
		h = mix(h, uint64(uint32(id)))
	}
	return h
}

// keyTable maps keys to cache entries by open addressing; it is smaller
// and quicker than a map for the lookup every action takes.
type keyTable struct {
	keys  []uint64
	ents  []int32 // entry+1; 0 marks an empty slot
	used  int
	shift uint
}

func (t *keyTable) reset() {
	if t.keys == nil {
		t.keys, t.ents, t.shift = make([]uint64, 256), make([]int32, 256), 64-8
	}
	if t.used > 0 {
		clear(t.ents)
	}
	t.used = 0
}

func (t *keyTable) slot(key uint64) int { return int((key * 0x9e3779b97f4a7c15) >> t.shift) }

// find returns the entry of key.
func (t *keyTable) find(key uint64) (int, bool) {
	mask := len(t.keys) - 1
	for i := t.slot(key); t.ents[i] != 0; i = (i + 1) & mask {
		if t.keys[i] == key {
			return int(t.ents[i]) - 1, true
		}
	}
	return 0, false
}

// insert adds key, which must be absent, with entry e.
func (t *keyTable) insert(key uint64, e int) {
	if 2*(t.used+1) > len(t.keys) {
		t.grow()
	}
	mask := len(t.keys) - 1
	i := t.slot(key)
	for t.ents[i] != 0 {
		i = (i + 1) & mask
	}
	t.keys[i], t.ents[i] = key, int32(e+1)
	t.used++
}

func (t *keyTable) grow() {
	keys, ents := t.keys, t.ents
	t.keys, t.ents, t.shift, t.used = make([]uint64, 2*len(keys)), make([]int32, 2*len(ents)), t.shift-1, 0
	for i, e := range ents {
		if e != 0 {
			t.insert(keys[i], int(e)-1)
		}
	}
}
