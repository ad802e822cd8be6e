package household

// The state key is a Zobrist hash: the XOR of one pseudo-random value per
// fact of the state (agent at r, holding o, object o in r, object o has
// flags f, receptacle r open). Every setter updates it incrementally, so
// StateKey is O(1); fullKey recomputes it from scratch. Values are derived
// from the task seed, so equal states of the same task get equal keys in
// every episode, and mix64 being a bijection keeps the facts' values distinct.

// Fact classes of the Zobrist table.
const (
	factAt uint64 = iota + 1
	factHand
	factObjAt
	factFlags
	factOpen
)

// z returns the Zobrist value of fact (class, x).
func (e *episode) z(class, x uint64) uint64 { return mix64(e.base ^ class<<56 ^ x) }

func (e *episode) zAt(r int16) uint64 { return e.z(factAt, uint64(uint16(r))) }

func (e *episode) zHand(o int16) uint64 { return e.z(factHand, uint64(uint16(o))) }

func (e *episode) zObjAt(o, r int16) uint64 {
	if r < 0 {
		return 0 // held: covered by the hand fact
	}
	return e.z(factObjAt, uint64(o)<<16|uint64(r))
}

func (e *episode) zFlags(o int16, f uint8) uint64 {
	if f == 0 {
		return 0
	}
	return e.z(factFlags, uint64(o)<<8|uint64(f))
}

func (e *episode) zOpen(r int16, open bool) uint64 {
	if !open {
		return 0
	}
	return e.z(factOpen, uint64(r))
}

// fullKey computes the state key from scratch.
func (e *episode) fullKey() uint64 {
	k := e.zAt(e.at) ^ e.zHand(e.hand)
	for o := range e.objAt {
		k ^= e.zObjAt(int16(o), e.objAt[o]) ^ e.zFlags(int16(o), e.flags[o])
	}
	for r := range e.open {
		k ^= e.zOpen(int16(r), e.open[r])
	}
	return k
}

func (e *episode) setAt(r int16) {
	e.key ^= e.zAt(e.at) ^ e.zAt(r)
	e.at = r
}

func (e *episode) setHand(o int16) {
	e.key ^= e.zHand(e.hand) ^ e.zHand(o)
	e.hand = o
}

func (e *episode) setObjAt(o, r int16) {
	e.key ^= e.zObjAt(o, e.objAt[o]) ^ e.zObjAt(o, r)
	e.objAt[o] = r
}

func (e *episode) setFlags(o int16, f uint8) {
	e.key ^= e.zFlags(o, e.flags[o]) ^ e.zFlags(o, f)
	e.flags[o] = f
}

func (e *episode) setOpen(r int16, open bool) {
	e.key ^= e.zOpen(r, e.open[r]) ^ e.zOpen(r, open)
	e.open[r] = open
}
