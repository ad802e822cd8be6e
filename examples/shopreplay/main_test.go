package main

import (
	"bytes"
	"fmt"
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
	if err := run(&out, path, true, true); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "episodes 500,") || !strings.Contains(out.String(), "steps by the expert's action") {
		t.Errorf("unexpected report:\n%s", out.String())
	}
	if err := run(&out, "", true, true); err == nil {
		t.Error("no --policy must be an error")
	}
}

// successes reads the success count off a replay's first line.
func successes(t *testing.T, out string) int {
	t.Helper()
	var eps, n int
	if _, err := fmt.Sscanf(out, "episodes %d, successes %d,", &eps, &n); err != nil || eps != 500 {
		t.Fatalf("unexpected report (%v):\n%s", err, out)
	}
	return n
}

// The reader shops from the first results page; reading the price limit
// must buy fewer items over it and succeed more often than ignoring it.
func TestReaderReadsThePrice(t *testing.T) {
	var with, without bytes.Buffer
	if err := run(&with, "reader", true, true); err != nil {
		t.Fatal(err)
	}
	if err := run(&without, "reader", true, false); err != nil {
		t.Fatal(err)
	}
	if w, wo := successes(t, with.String()), successes(t, without.String()); w <= wo || w < 150 {
		t.Errorf("successes with the price %d, without %d: want more with it, and at least 150 of 500", w, wo)
	}
	out := with.String()
	// It clicks every offered option the instruction names, so what it
	// misses is mostly an option the product it chose does not offer:
	// options show on the item page only.
	lacks, unselected := count(t, out, "the product lacks a goal option"), count(t, out, "an offered goal option not selected")
	if lacks < 100 || unselected*5 > lacks {
		t.Errorf("the reader's failed purchases: %d lack a goal option, %d miss an offered one; want most to lack one:\n%s", lacks, unselected, out)
	}
	own := out[strings.Index(out, "the policy's actions:"):strings.Index(out, "steps by the expert's")]
	if strings.Contains(own, "click[next >]") || strings.Contains(own, "click[description]") {
		t.Errorf("the reader must stay on the first page and never read a description:\n%s", with.String())
	}
}

// count reads the count on the report's line that starts with label.
func count(t *testing.T, out, label string) int {
	t.Helper()
	i := strings.Index(out, "  "+label)
	var n int
	if i < 0 {
		t.Fatalf("no line %q in the report:\n%s", label, out)
	}
	if _, err := fmt.Sscanf(out[i+2+len(label):], "%d", &n); err != nil {
		t.Fatalf("line %q: %v", label, err)
	}
	return n
}
