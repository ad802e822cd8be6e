//go:build !amd64 || amd64.v3

package policy

// fusesMulAdd: the compiler may fuse a multiply and an add here.
const fusesMulAdd = true
