package policy

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTanhAllIsMathTanh checks tanhAll bit for bit against math.Tanh on
// the special values, both sides of every branch, and random values, in
// every position of a block of four.
func TestTanhAllIsMathTanh(t *testing.T) {
	v := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(),
		0.625, -0.625, math.Nextafter(0.625, 0), 44.014845965556525, 44.01484596555653, -44.1,
		5e-324, -5e-324, 1e-300, 0.5, 1, -3, 20}
	for _, b := range []float64{0.625, 44.014845965556525} { // both sides of each boundary
		for x, i := b, 0; i < 8; i++ {
			v = append(v, x, -x)
			x = math.Nextafter(x, 0)
		}
		for x, i := b, 0; i < 8; i++ {
			x = math.Nextafter(x, 100)
			v = append(v, x, -x)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200000 {
		v = append(v, rng.NormFloat64()*math.Pow(10, float64(rng.IntN(7)-4)), 100*rng.Float64()-50)
	}
	for shift := range 8 {
		got := append([]float64(nil), v[shift:]...)
		tanhAll(got)
		for i, x := range v[shift:] {
			if want := math.Tanh(x); math.Float64bits(got[i]) != math.Float64bits(want) {
				t.Fatalf("tanh(%v): got %v, want %v", x, got[i], want)
			}
		}
	}
}
