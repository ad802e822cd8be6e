package policy

import "math/bits"

// table maps 64-bit hashes to values by open addressing. The featurizer
// and the action cache look hashes up for every action of every state,
// which Go maps make costly; emptying a table takes constant time.
type table[V any] struct {
	keys  []uint64
	vals  []V
	stamp []uint32 // a slot is in use when its stamp is cur
	cur   uint32
	used  int
	shift uint // 64 − log2(len(keys))
}

// reset empties the table.
func (t *table[V]) reset() {
	t.cur++
	t.used = 0
	if t.cur == 0 { // stamps wrapped around
		clear(t.stamp)
		t.cur = 1
	}
}

func (t *table[V]) slot(h uint64) int { return int((h * 0x9e3779b97f4a7c15) >> t.shift) }

// get returns the value of h and whether it is there.
func (t *table[V]) get(h uint64) (v V, ok bool) {
	if t.used == 0 {
		return v, false
	}
	mask := len(t.keys) - 1
	for i := t.slot(h); t.stamp[i] == t.cur; i = (i + 1) & mask {
		if t.keys[i] == h {
			return t.vals[i], true
		}
	}
	return v, false
}

// at returns the value of h for updating, adding a zero value if needed.
func (t *table[V]) at(h uint64) *V {
	if 2*(t.used+1) > len(t.keys) {
		t.grow()
	}
	mask := len(t.keys) - 1
	i := t.slot(h)
	for ; t.stamp[i] == t.cur; i = (i + 1) & mask {
		if t.keys[i] == h {
			return &t.vals[i]
		}
	}
	var zero V
	t.keys[i], t.vals[i], t.stamp[i] = h, zero, t.cur
	t.used++
	return &t.vals[i]
}

func (t *table[V]) grow() {
	keys, vals, stamp, cur := t.keys, t.vals, t.stamp, t.cur
	n := max(64, 2*len(keys))
	t.keys, t.vals, t.stamp, t.cur, t.used = make([]uint64, n), make([]V, n), make([]uint32, n), 1, 0
	t.shift = uint(64 - bits.TrailingZeros(uint(n)))
	for i, k := range keys {
		if stamp[i] == cur {
			*t.at(k) = vals[i]
		}
	}
}
