package main

import "testing"

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"512MiB", 512 << 20, true}, {"2GiB", 2 << 30, true}, {"64KiB", 64 << 10, true}, {"1000", 1000, true},
		{"off", 0, true}, {"0", 0, false}, {"-1MiB", 0, false}, {"lots", 0, false}, {"", 0, false},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d (ok %v)", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestMemoryLimitFlagFailsFast(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	if _, _, err := runRspo(testContext(t), "--memory-limit", "lots", "version"); err == nil {
		t.Error("a bad --memory-limit was accepted")
	}
}
