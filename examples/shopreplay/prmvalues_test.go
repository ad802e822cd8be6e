package main

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/prm"
)

// A page's tally: < prev's share of the tilted uniform policy is
// exp(λ r̂(prev)) over the sum of exp(λ r̂) of all the page's actions.
func TestValueTallyTiltShare(t *testing.T) {
	acts := []string{"click[buy now]", "click[< prev]", "click[small]", "click[large]"}
	scores := []float64{0.1, 0.5, 0.3, 0.2}
	var v valueTally
	v.add(acts, scores, 10)
	want := 1 / (1 + math.Exp(-4) + math.Exp(-2) + math.Exp(-3))
	if math.Abs(v.prevShare-want) > 1e-12 || v.prevFirst != 1 || v.pages != 1 {
		t.Errorf("tally %+v: want prev share %.6f, prev first once", v, want)
	}
	if v.sums[0] != 0.1 || v.sums[1] != 0.5 || v.sums[3] != 0.3 {
		t.Errorf("sums %v: want buy 0.1, prev 0.5, best option 0.3", v.sums)
	}
	v.add(acts, []float64{0.9, 0.1, 0.3, 0.2}, 0)
	if v.prevFirst != 1 || math.Abs(v.prevShare-want-0.25) > 1e-12 {
		t.Errorf("untilted page: prev first %d, share %.6f; want 1 and %.6f", v.prevFirst, v.prevShare, want+0.25)
	}
}

// Every product of the 500 first results pages is opened once and lands in
// exactly one kind; some are targets and some lack a goal option.
func TestPRMValuesOpensEveryFirstPageItem(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prm.bin")
	if err := prm.SaveFile(path, prm.Random(7)); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := prmValues(&out, path, 10); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, name := range pageKindNames {
		n := count(t, out.String(), name)
		if n == 0 {
			t.Errorf("no item page is %q:\n%s", name, out.String())
		}
		total += n
	}
	if total != 500*10 {
		t.Errorf("%d item pages, want 5000 (10 results on each of 500 first pages):\n%s", total, out.String())
	}
	if err := prmValues(&out, filepath.Join(t.TempDir(), "missing.bin"), 10); err == nil {
		t.Error("a missing PRM file must be an error")
	}
}

func TestTallySteps(t *testing.T) {
	item := `[button] Back to Search [button_]\n[button] < Prev [button_]\n[button] Buy Now [button_]\n`
	rows := strings.Join([]string{
		`{"observation":"` + item + `","action":"click[< prev]","success":false}`,
		`{"observation":"` + item + `","action":"click[< prev]","success":true}`,
		`{"observation":"` + item + `","action":"click[buy now]","success":true}`,
		`{"observation":"[button] Search [button_]\n","action":"search[tea]","success":true}`,
		``,
	}, "\n")
	got, err := tallySteps(strings.NewReader(rows))
	if err != nil {
		t.Fatal(err)
	}
	if got.steps["click[< prev]"] != 2 || got.succeeded["click[< prev]"] != 1 || got.steps["click[buy now]"] != 1 || got.steps["search"] != 0 {
		t.Errorf("tally %+v: want 2 prev steps (1 succeeded), 1 buy, no search (not an item page)", got)
	}
	for _, bad := range []string{`{"observation":"x"`, `{"observation":"x","success":true}`, `[1,2]`} {
		if _, err := tallySteps(strings.NewReader(rows + "\n" + bad)); err == nil || !strings.Contains(err.Error(), "line 6") {
			t.Errorf("row %s: error %v, want one naming line 6", bad, err)
		}
	}
	long := `{"observation":"` + strings.Repeat("x", maxRowBytes) + `","action":"a"}`
	if _, err := tallySteps(strings.NewReader(long)); err == nil {
		t.Error("a row over the bound must be an error")
	}
}

func FuzzTallySteps(f *testing.F) {
	f.Add([]byte(`{"observation":"[button] Buy Now [button_]","action":"click[< prev]","success":true}`))
	f.Add([]byte("{}\n\n{\"action\":\"x\"}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := tallySteps(bytes.NewReader(b))
		if err != nil {
			return
		}
		for k, n := range got.steps {
			if s := got.succeeded[k]; s < 0 || s > n {
				t.Errorf("%s: %d of %d steps succeeded", k, s, n)
			}
		}
	})
}
