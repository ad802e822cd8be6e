//go:build !amd64 || !gc || noasm || safe

package policy

// amd64Gonum: gonum's f64 kernels are its amd64 assembly.
const amd64Gonum = false
