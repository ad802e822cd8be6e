//go:build !amd64 || !gc || purego || amd64.v3

package policy

import "math"

// tanhAll replaces every v[i] with math.Tanh(v[i]).
func tanhAll(v []float64) {
	for i, x := range v {
		v[i] = math.Tanh(x)
	}
}
