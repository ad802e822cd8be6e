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

// A run whose learner trained cycles without all their exploration says
// so, naming them; a run without any says nothing of it.
func TestSummaryWarnsOfShortCycles(t *testing.T) {
	for _, tt := range []struct {
		short []int64
		want  string
	}{
		{nil, ""},
		{[]int64{0, 3}, "warning: 2 of its cycles (0, 3) trained without all their exploration"},
	} {
		var b strings.Builder
		if err := printSummary(&b, pipeline.Summary{Run: "r", ShortCycles: tt.short}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if tt.want == "" && strings.Contains(out, "warning") || !strings.Contains(out, tt.want) {
			t.Errorf("short cycles %v: got:\n%s\nwant a line with %q", tt.short, out, tt.want)
		}
	}
}

func TestPresetSaysWhatItTrains(t *testing.T) {
	tests := []struct {
		env  string
		opts map[string]string
		want []string // in the note; none: no note
	}{
		{"household", map[string]string{"preset": "easy"}, []string{"trains 1 of the 6", "pick_two_and_place", "pick_cool_then_place"}},
		{"household", map[string]string{"preset": "medium"}, []string{"trains 4 of the 6", "never pick_two_and_place, pick_cool_then_place)"}},
		{"household", nil, nil},
		{"household", map[string]string{"preset": "hard"}, nil},
		{"household", map[string]string{"task_types": "pick_and_place,pick_cool_then_place"}, []string{"trains 2 of the 6"}},
		{"shop", nil, nil},
	}
	for _, tt := range tests {
		o := defaultRunOptions()
		o.Env, o.EnvOptions = tt.env, tt.opts
		n := presetNote(o)
		if len(tt.want) == 0 && n != "" {
			t.Errorf("%s %v: got a note %q", tt.env, tt.opts, n)
		}
		for _, w := range tt.want {
			if !strings.Contains(n, w) {
				t.Errorf("%s %v: note %q, want %q in it", tt.env, tt.opts, n, w)
			}
		}
	}
}

// rspo run says what π_θ starts from: the source run chosen and every
// candidate's success, or the run or file given.
func TestInitPolicyLine(t *testing.T) {
	for _, tt := range []struct {
		p    pipeline.InitPolicy
		want string
	}{
		{pipeline.InitPolicy{Source: "source", Run: "s103", Candidates: map[string]float64{"s101": 0.42, "s103": 0.5}},
			"rspo: π_θ starts from the final policy of s103, the best of its 2 source runs on 256 held-out train tasks (success 0.42, 0.50)"},
		{pipeline.InitPolicy{Source: "run:r1", Run: "r1", Version: 150}, "rspo: π_θ starts from the final policy of r1 (version 150)"},
		{pipeline.InitPolicy{Source: "sft.policy"}, "rspo: π_θ starts from sft.policy"},
	} {
		if got := initPolicyLine(tt.p); got != tt.want {
			t.Errorf("got %q\nwant %q", got, tt.want)
		}
	}
}
