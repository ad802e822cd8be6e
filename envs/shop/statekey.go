package shop

// FNV-1a 64-bit parameters.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// StateKey hashes the goal, page (a purchase leads to its own page), query,
// results page, item and selected options (FNV-1a, stable across
// processes). Identical states give equal keys; the step count is not part
// of the state, so ending by the step limit keeps the key.
func (x *Episode) StateKey() uint64 {
	h := uint64(fnvOffset)
	mix := func(v int) {
		u := uint64(int64(v))
		for range 8 {
			h ^= u & 0xff
			h *= fnvPrime
			u >>= 8
		}
	}
	mix(x.goal.index)
	mix(int(x.page))
	mix(x.query)
	mix(x.resultPage)
	mix(x.item)
	mix(len(x.selected))
	for _, s := range x.selected {
		mix(s)
	}
	return h
}
