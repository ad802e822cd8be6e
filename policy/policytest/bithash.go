package policytest

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/rspo-dev/rspo/schemas"
)

// BitHash hashes float64 values by their exact bits, so that any change of
// rounding shows: the golden tests of policy and learner pin results with it.
type BitHash struct{ h [32]byte }

// Floats folds v into the hash.
func (b *BitHash) Floats(v ...float64) {
	buf := make([]byte, 0, 8*len(v)+32)
	buf = append(buf, b.h[:]...)
	for _, x := range v {
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(x))
	}
	b.h = sha256.Sum256(buf)
}

// String is the hash's first 12 bytes in hex.
func (b *BitHash) String() string { return fmt.Sprintf("%x", b.h[:12]) }

// TrajectoryHash hashes every step's behaviour log-prob, action index and
// reward of ts, in order.
func TrajectoryHash(ts []*schemas.Trajectory) string {
	var h BitHash
	for _, t := range ts {
		for _, st := range t.Steps {
			h.Floats(st.BehaviorLogProb, float64(st.ActionIndex), st.Reward)
		}
	}
	return h.String()
}
