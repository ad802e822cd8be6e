package household

import "math/bits"

// rng is a splitmix64 generator. Worlds are derived from it rather than from
// math/rand so that a seed maps to the same home forever, whatever the Go
// version: the fixed evaluation splits depend on it.
type rng struct{ s uint64 }

// newRNG returns a generator for seed and a stream label.
func newRNG(seed int64, stream uint64) *rng {
	return &rng{s: mix64(uint64(seed) ^ mix64(stream))}
}

// mix64 is the splitmix64 finaliser: a fast, well-mixing bijection.
func mix64(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	return z ^ z>>31
}

// next returns the next 64 random bits.
func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	return mix64(r.s)
}

// intn returns a number in [0, n); n must be positive.
func (r *rng) intn(n int) int {
	hi, _ := bits.Mul64(r.next(), uint64(n))
	return int(hi)
}

// float returns a number in [0, 1).
func (r *rng) float() float64 { return float64(r.next()>>11) / (1 << 53) }

// pick returns an index drawn with probability proportional to weights,
// or -1 when every weight is zero.
func (r *rng) pick(weights []float64) int {
	total := 0.0
	for _, w := range weights {
		total += w
	}
	if total <= 0 {
		return -1
	}
	x := r.float() * total
	last := -1
	for i, w := range weights {
		if w <= 0 {
			continue
		}
		if x < w {
			return i
		}
		x -= w
		last = i
	}
	return last
}
