// Package docsync holds the tests that keep the documentation true to the
// code: the import graph in docs/architecture.md is generated from the
// packages' imports, and every file that code, help text or docs cite
// exists in the repository. It has no API; `go test ./internal/docsync
// -update` rewrites the generated parts.
package docsync
