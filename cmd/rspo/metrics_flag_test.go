package main

import (
	"strings"
	"testing"
)

// Every command that serves metrics refuses an address it cannot listen
// on before it starts its work.
func TestMetricsAddrFailsFast(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"run", []string{"run", "--data", t.TempDir(), "--metrics-addr", "127.0.0.1"}},
		{"serve actor", []string{"serve", "actor", "--run", "r1", "--metrics-addr", "127.0.0.1:99999"}},
		{"serve explorer", []string{"serve", "explorer", "--run", "r1", "--metrics-addr", "nowhere"}},
		{"serve swapper", []string{"serve", "swapper", "--run", "r1", "--metrics-addr", ":port"}},
		{"serve buffer", []string{"serve", "buffer", "--run", "r1", "--data", t.TempDir(), "--metrics-addr", "127.0.0.1"}},
		{"serve learner", []string{"serve", "learner", "--run", "r1", "--metrics-addr", "127.0.0.1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, err := runRspo(testContext(t), tc.args...)
			if err == nil || !strings.Contains(err.Error(), "--metrics-addr") {
				t.Fatalf("got error %v, want one about --metrics-addr\n%s", err, stderr)
			}
		})
	}
}
