//go:build gc && !purego && !amd64.v3

package policy

import (
	"math"

	"golang.org/x/sys/cpu"
)

// hasVectorTanh selects tanhAVX. It mirrors math.Exp's assembly only in
// its FMA variant, the one math uses wherever AVX2 is (math: useFMA is
// AVX and FMA); elsewhere the portable loop runs. Built for AVX2-class
// targets (GOAMD64=v3), math.Tanh's Go code may itself be fused, so this
// file is left out there.
var hasVectorTanh = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func tanhAVX(v *float64, n int, k *[tanhConsts]uint64)

//go:noescape
func tanh512(v *float64, n int, k *[tanhConsts]uint64)

// tanhAll replaces every v[i] with math.Tanh(v[i]), eight (AVX-512) or
// four at a time: the same operations as math.Tanh, with math.Exp's (see
// tanhAVX).
func tanhAll(v []float64) {
	n8 := 0
	if hasVectorTanh && hasAVX512 {
		if n8 = len(v) &^ 7; n8 > 0 {
			tanh512(&v[0], n8, &tanhK)
		}
	}
	n := len(v) &^ 3
	if hasVectorTanh && n > n8 {
		tanhAVX(&v[n8], n-n8, &tanhK)
	}
	tanhGo(v[n:])
	if !hasVectorTanh {
		tanhGo(v[:n])
	}
}

// The constants of tanhAVX, computed as math computes them.
const tanhConsts = 26

var tanhK = func() (k [tanhConsts]uint64) {
	const maxLog = 8.8029691931113054295988e+01 // math/tanh.go
	// math/exp_amd64.s
	const (
		log2e = 1.4426950408889634073599246810018920
		ln2U  = 0.69314718055966295651160180568695068359375
		ln2L  = 0.28235290563031577122588448175013436025525412068e-12
	)
	f := []float64{
		0: 0.5 * maxLog, 1: 0.625, 2: 1, 3: 2,
		4: tanhP0, 5: tanhP1, 6: tanhP2, 7: tanhQ0, 8: tanhQ1, 9: tanhQ2,
		10: log2e, 11: ln2U, 12: ln2L, 13: 0.0625,
		14: 2.4801587301587301587e-5, 15: 1.9841269841269841270e-4, 16: 1.3888888888888888889e-3,
		17: 8.3333333333333333333e-3, 18: 4.1666666666666666667e-2, 19: 1.6666666666666666667e-1, 20: 0.5,
	}
	for i, x := range f {
		k[i] = math.Float64bits(x)
	}
	k[21] = 1<<63 - 1 // |x| mask
	k[22] = 1 << 63   // sign mask
	k[23] = 1023 | 1023<<32
	k[24] = 1023 | 1023<<32
	return k
}()
