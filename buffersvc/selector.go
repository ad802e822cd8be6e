package buffersvc

import "math/rand/v2"

// selector picks up to want entries from a stream already in priority order.
// Entries with equal priority form a tie group; a group is read whole, then
// shuffled with rng, and as many of it taken as still fit — so the order
// among exact ties is random but reproducible from the seed.
type selector struct {
	want   int
	rng    *rand.Rand
	picked []indexEntry
	group  []indexEntry
}

func newSelector(want int, rng *rand.Rand) *selector {
	return &selector{want: want, rng: rng, picked: make([]indexEntry, 0, want)}
}

// add offers the next entry and reports whether more entries are wanted.
func (s *selector) add(e indexEntry) bool {
	if len(s.group) > 0 && e.prio != s.group[0].prio {
		s.flush()
	}
	if s.full() {
		return false
	}
	s.group = append(s.group, e)
	return true
}

// flush closes the current tie group.
func (s *selector) flush() {
	s.rng.Shuffle(len(s.group), func(i, j int) { s.group[i], s.group[j] = s.group[j], s.group[i] })
	n := min(len(s.group), s.want-len(s.picked))
	s.picked = append(s.picked, s.group[:n]...)
	s.group = s.group[:0]
}

// full reports whether want entries have been picked.
func (s *selector) full() bool { return len(s.picked) >= s.want }
