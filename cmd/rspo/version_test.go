package main

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestWriteVersion(t *testing.T) {
	main := debug.Module{Path: "github.com/rspo-dev/rspo", Version: "v0.4.0"}
	tests := []struct {
		name     string
		settings []debug.BuildSetting
		want     []string
	}{
		{"clean checkout", []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"},
			{Key: "vcs.modified", Value: "false"}},
			[]string{"rspo github.com/rspo-dev/rspo v0.4.0", "revision abc123\n", "commit time 2026-01-02T03:04:05Z", "go go1.26"}},
		{"modified tree", []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}},
			[]string{"revision abc123 (modified)"}},
		{"no vcs", nil, []string{"revision unknown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := writeVersion(&b, &debug.BuildInfo{GoVersion: "go1.26", Main: main, Settings: tt.settings}); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output %q lacks %q", b.String(), w)
				}
			}
		})
	}
}

func TestVersionCommandPrintsThisBinarysGoVersion(t *testing.T) {
	out, _, err := runRspo(testContext(t), "version")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "go "+runtime.Version()) {
		t.Errorf("output %q lacks go %s", out, runtime.Version())
	}
}
