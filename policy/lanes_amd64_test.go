//go:build gc && !purego && !noasm && !safe && !amd64.v3

package policy

import "testing"

// TestWithoutVectorKernels reruns the golden and kernel tests with the
// vector kernels off, as on a CPU without AVX2.
func TestWithoutVectorKernels(t *testing.T) {
	avx, loops, vtanh := hasAVX, vecLoops, hasVectorTanh
	defer func() { hasAVX, vecLoops, hasVectorTanh = avx, loops, vtanh }()
	hasAVX, vecLoops, hasVectorTanh = false, false, false
	t.Run("golden", TestGoldenRollouts)
	t.Run("hidden", TestHiddenRowsMatchGemm)
	t.Run("addRows", TestAddRowsMatchesGemm)
	t.Run("tanh", TestTanhAllIsMathTanh)
}
