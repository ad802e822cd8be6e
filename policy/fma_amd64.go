//go:build !amd64.v3

package policy

// fusesMulAdd: below GOAMD64=v3 the compiler emits no fused multiply-add.
const fusesMulAdd = false
