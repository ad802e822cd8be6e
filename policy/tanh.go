//go:build amd64 && gc && !purego && !amd64.v3

package policy

import "math"

// tanhGo replaces every v[i] with math.Tanh(v[i]). It is math.Tanh's own
// algorithm (math/tanh.go; amd64 has no assembly version), in a loop
// instead of a call per value: the hidden layers take hundreds of tanh per
// step. Only where the compiler fuses no multiply-add (amd64 below v3)
// does a copy of the code give math's bits.
func tanhGo(v []float64) {
	const maxLog = 8.8029691931113054295988e+01 // log(2**127)
	for i, x := range v {
		z := math.Abs(x)
		switch {
		case z > 0.5*maxLog:
			z = 1
			if x < 0 {
				z = -1
			}
		case z >= 0.625:
			s := math.Exp(2 * z)
			z = 1 - 2/(s+1)
			if x < 0 {
				z = -z
			}
		case x == 0:
			z = x
		default:
			s := x * x
			z = x + x*s*((tanhP0*s+tanhP1)*s+tanhP2)/(((s+tanhQ0)*s+tanhQ1)*s+tanhQ2)
		}
		v[i] = z
	}
}

// math/tanh.go's coefficients.
const (
	tanhP0 = -9.64399179425052238628e-1
	tanhP1 = -9.92877231001918586564e1
	tanhP2 = -1.61468768441708447952e3
	tanhQ0 = 1.12811678491632931402e2
	tanhQ1 = 2.23548839060100448583e3
	tanhQ2 = 4.84406305325125486048e3
)
