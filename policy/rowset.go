package policy

// rowSet is a set of hashed-feature rows with O(1) insert and an insertion
// ordered list, so sparse work touches only the rows in use.
type rowSet struct {
	bits []uint64
	list []int32
}

func newRowSet(n int) rowSet { return rowSet{bits: make([]uint64, (n+63)/64)} }

func (s *rowSet) add(r int32) {
	w, b := r>>6, uint64(1)<<(r&63)
	if s.bits[w]&b == 0 {
		s.bits[w] |= b
		s.list = append(s.list, r)
	}
}

func (s *rowSet) has(r int32) bool { return s.bits[r>>6]&(uint64(1)<<(r&63)) != 0 }

func (s *rowSet) clear() {
	for _, r := range s.list {
		s.bits[r>>6] = 0
	}
	s.list = s.list[:0]
}

func (s rowSet) clone() rowSet {
	return rowSet{bits: append([]uint64(nil), s.bits...), list: append([]int32(nil), s.list...)}
}

func newRowSetPtr(n int) *rowSet { s := newRowSet(n); return &s }
