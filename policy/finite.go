package policy

import (
	"fmt"
	"math"
)

// CheckFinite reports whether every parameter a snapshot stores is a
// finite float32, as UnmarshalBinary requires: a policy that fails it
// could not be loaded again, so MarshalBinary refuses it and a learner
// refuses the update that made it. A float64 parameter beyond the float32
// range fails too: it would be stored as an infinity. Errors match
// ErrSnapshot.
func (p *Policy) CheckFinite() error {
	l := &p.lay
	for _, r := range p.touched.list {
		if v, bad := nonFinite32(p.params[l.emb(r) : l.emb(r)+l.row]); bad {
			return &SnapshotError{Reason: fmt.Sprintf("row %d holds %v, not a finite float32", r, v)}
		}
	}
	if v, bad := nonFinite32(p.params[l.sparse:]); bad {
		return &SnapshotError{Reason: fmt.Sprintf("a dense parameter is %v, not a finite float32", v)}
	}
	return nil
}

// nonFinite32 returns the first value of v that is not a finite float32.
func nonFinite32(v []float64) (float64, bool) {
	for _, x := range v {
		if !(math.Abs(x) <= math.MaxFloat32) { // NaN fails too
			return x, true
		}
	}
	return 0, false
}
