//go:build gc && !noasm && !safe

package policy

// amd64Gonum: gonum's f64 kernels are its amd64 assembly.
const amd64Gonum = true
