package policy

import (
	"math/rand/v2"
	"testing"
)

// TestTable checks the hash table against a map over random updates,
// lookups and resets, with keys that collide in their slots.
func TestTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var tab table[facts]
	want := map[uint64]facts{}
	for i := range 20000 {
		h := uint64(rng.IntN(300)) << 40 // many keys share their low bits
		switch rng.IntN(5) {
		case 0:
			tab.at(h).visited = true
			f := want[h]
			f.visited = true
			want[h] = f
		case 1:
			tab.at(h).taken++
			f := want[h]
			f.taken++
			want[h] = f
		default:
			if got, _ := tab.get(h); got != want[h] {
				t.Fatalf("op %d: key %x: got %+v, want %+v", i, h, got, want[h])
			}
		}
		if rng.IntN(500) == 0 {
			tab.reset()
			clear(want)
		}
	}
}
