package schemas

import (
	"errors"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// errAllocBudget is the panic value of a decodeArena over budget.
var errAllocBudget = errors.New("schemas: arrow buffers exceed the decode memory budget")

// decodeArena is the memory.Allocator Arrow's reader copies a message's
// buffers into during one decode: a bump allocator over a reusable slab,
// with a budget.
//
// The budget guards against corrupt input: Arrow sizes buffers from lengths
// written inside the message, and when they ask for more than the message
// could hold, Allocate panics with errAllocBudget (recovered by the reader or
// the decoder) instead of exhausting the process's memory.
//
// The reuse is safe because nothing decoded keeps a reference into the
// arena: recordToTrajectory copies every value out before the decode
// returns, after which the arena is reset and reused (see decoder).
type decodeArena struct {
	slab []byte
	left int
}

var _ memory.Allocator = (*decodeArena)(nil)

// maxPooledArena is the largest arena kept for reuse.
const maxPooledArena = 4 << 20

// reset empties the arena and sets the budget for decoding a message of n
// bytes: uncompressed buffers never need more than the message itself, plus
// alignment padding.
func (a *decodeArena) reset(n int) {
	a.slab, a.left = a.slab[:0], 2*n+64<<10
}

func (a *decodeArena) charge(size int) {
	if size < 0 || size > a.left {
		panic(errAllocBudget)
	}
	a.left -= size
}

// Allocate returns size zeroed bytes, 64-byte aligned within the slab.
func (a *decodeArena) Allocate(size int) []byte {
	a.charge(size)
	n := (size + 63) &^ 63
	if len(a.slab)+n > cap(a.slab) {
		a.slab = make([]byte, 0, max(2*cap(a.slab), n, 64<<10))
	}
	start := len(a.slab)
	a.slab = a.slab[:start+n]
	b := a.slab[start : start+size : start+size]
	clear(b)
	return b
}

// Reallocate returns b resized to size, copying it if it must move.
func (a *decodeArena) Reallocate(size int, b []byte) []byte {
	if size <= len(b) {
		return b[:size]
	}
	nb := a.Allocate(size)
	copy(nb, b)
	return nb
}

// Free does nothing: the arena is reset as a whole.
func (a *decodeArena) Free([]byte) {}
