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

// The summary says which PRM of the source runs the run used and whether
// it trained it or loaded an earlier run's; a run without one says nothing.
func TestSummarySaysWhereThePRMCameFrom(t *testing.T) {
	tests := []struct {
		name string
		prm  *pipeline.SourcePRM
		want string
	}{
		{"none", nil, ""},
		{"trained", &pipeline.SourcePRM{Object: "source-prm/ab"}, "its PRM (source-prm/ab, 0 trajectories, held-out AUC 0.000): trained by this run"},
		{"reused", &pipeline.SourcePRM{Object: "source-prm/ab", Reused: true}, "trained by an earlier run, reused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := printSummary(&b, pipeline.Summary{Run: "r", SourcePRM: tt.prm}); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if tt.want == "" && strings.Contains(out, "its PRM") || !strings.Contains(out, tt.want) {
				t.Errorf("got:\n%s\nwant a line with %q", out, tt.want)
			}
		})
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
