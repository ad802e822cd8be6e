// Package fuzzcorpus keeps checked-in fuzz seed corpora in step with the
// seeds a test builds: each seed is one file in the `go test fuzz v1`
// format of a single []byte argument.
package fuzzcorpus

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Check compares every seed with its file dir/name and reports a stale or
// missing one; with update it writes them first. pkg names the package for
// the hint ("run go test ./pkg -update").
func Check(t testing.TB, dir string, seeds map[string][]byte, update bool, pkg string) {
	t.Helper()
	for name, b := range seeds {
		path := filepath.Join(dir, name)
		want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
		if update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./%s -update to create it)", err, pkg)
		}
		if string(got) != want {
			t.Errorf("%s is stale; run go test ./%s -update", path, pkg)
		}
	}
}
