package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/policy"
)

func TestKind(t *testing.T) {
	for a, want := range map[string]string{
		"search[nail polish]":   "search",
		"click[b0smym5jgl]":     "click[item]",
		"click[3 pack]":         "click[option]",
		"click[next >]":         "click[next >]",
		"click[buy now]":        "click[buy now]",
		"click[bright yellow]":  "click[option]",
		"click[back to search]": "click[back to search]",
	} {
		if got := kind(a); got != want {
			t.Errorf("kind(%q) = %q, want %q", a, got, want)
		}
	}
}

// An untrained policy replays every eval goal and the counts add up.
func TestReplayUntrainedPolicy(t *testing.T) {
	p, err := policy.New(policy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "policy.rspo")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(&out, path, true); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "episodes 500,") || !strings.Contains(out.String(), "steps by the expert's action") {
		t.Errorf("unexpected report:\n%s", out.String())
	}
	if err := run(&out, "", true); err == nil {
		t.Error("no --policy must be an error")
	}
}
