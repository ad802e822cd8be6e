package main

import (
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/pipeline"
)

// A score that only repeats the success rate (the household's outcomes are
// 0 or 1) is not printed again; a graded one (the shop's) is.
func TestSummaryPrintsScoresOnlyWhereTheyAddSomething(t *testing.T) {
	var b strings.Builder
	sum := pipeline.Summary{Run: "r", Final: map[string]float64{
		"eval_success_rate": 0.25, "eval_score": 0.25, // household-like
		"eval_shop_success_rate": 0.2, "eval_shop_score": 0.61, // shop-like
	}}
	if err := printSummary(&b, sum); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "eval_score ") || !strings.Contains(out, "eval_success_rate") {
		t.Errorf("a score equal to its success rate printed again:\n%s", out)
	}
	if !strings.Contains(out, "eval_shop_score") {
		t.Errorf("a graded score left out:\n%s", out)
	}
}

func TestEasyPresetSaysWhatItTrains(t *testing.T) {
	o := defaultRunOptions()
	o.EnvOptions = map[string]string{"preset": "easy"}
	if n := presetNote(o); !strings.Contains(n, "pick_and_place") {
		t.Errorf("easy preset note %q", n)
	}
	o.EnvOptions = map[string]string{"preset": "medium"}
	if n := presetNote(o); n != "" {
		t.Errorf("medium preset got a note %q", n)
	}
}
