package learner

import (
	"fmt"
	"testing"

	"github.com/rspo-dev/rspo/schemas"
)

func TestLoopSteps(t *testing.T) {
	tests := []struct {
		keys []uint64
		want string
	}{
		{[]uint64{1, 2, 3}, "[false false false]"},
		{[]uint64{1, 2, 2, 3}, "[false true false false]"},                  // a no-op at state 2
		{[]uint64{1, 2, 1, 3}, "[true true false false]"},                   // out and back
		{[]uint64{1, 2, 3, 2, 1, 4}, "[true true true true false false]"},   // a loop inside a loop
		{[]uint64{1, 2, 3, 2, 4, 3}, "[false true true false false false]"}, // from 2 and from 3 it comes back
		{[]uint64{0, 0, 0}, "[false false false]"},                          // no keys, no loops
	}
	for _, tt := range tests {
		tr := &schemas.Trajectory{Steps: make([]schemas.Step, len(tt.keys))}
		for i, k := range tt.keys {
			tr.Steps[i].StateKey = k
		}
		if got := fmt.Sprint(loopSteps(tr)); got != tt.want {
			t.Errorf("keys %v: loop steps %s, want %s", tt.keys, got, tt.want)
		}
	}
}

// TestOffCreditNoLoops: with OffCreditNoLoops the steps of a buffer
// success's loop get no advantage while its other steps keep theirs, a
// buffer failure's loop keeps its negative advantage, and on-policy
// samples are untouched; OffCreditEpisode (the default) gives every step
// the trajectory's advantage.
func TestOffCreditNoLoops(t *testing.T) {
	var on []*schemas.Trajectory
	for i := range 4 {
		on = append(on, fakeTrajectory(string(rune('a'+i)), "task", "grp", i == 0, 4))
	}
	on[1].Steps[2].StateKey = on[1].Steps[1].StateKey // an on-policy loop
	win := fakeTrajectory("win", "task", "", true, 4)
	win.Steps[2].StateKey = win.Steps[0].StateKey // steps 0 and 1 go out and back
	lose := fakeTrajectory("lose", "task", "", false, 4)
	lose.Steps[3].StateKey = lose.Steps[2].StateKey // step 2 changes nothing
	for _, tr := range []*schemas.Trajectory{win, lose} {
		tr.Source, tr.Swapped = schemas.SourceExplore, true
	}
	advantages := func(credit OffCredit) [][]float64 {
		tr := newTrainer(t, smallPolicy(t, 1), Config{OffCredit: credit})
		samples, err := tr.prepare(on, []*schemas.Trajectory{win, lose})
		if err != nil {
			t.Fatal(err)
		}
		groups := groupSamples(samples)
		tr.assignAdvantages(samples, groups)
		var st UpdateStats
		tr.batchStats(&st, samples, groups)
		if st.OffLoopFrac != 3.0/8 { // 2 of win's 4 steps, 1 of lose's, whatever the rule
			t.Errorf("%q: off_loop_frac %v, want 3/8", credit, st.OffLoopFrac)
		}
		var out [][]float64
		for _, s := range samples {
			out = append(out, s.adv)
		}
		return out
	}
	episode, noLoops := advantages(""), advantages(OffCreditNoLoops)
	for i := range 4 { // on-policy
		if fmt.Sprint(episode[i]) != fmt.Sprint(noLoops[i]) {
			t.Errorf("on-policy sample %d: %v, want %v as without the rule", i, noLoops[i], episode[i])
		}
	}
	w, l := episode[4][0], episode[5][0]
	if !(w > 0 && l < 0) {
		t.Fatalf("buffer advantages %v and %v, want a success above and a failure below the mean", w, l)
	}
	if got, want := fmt.Sprint(noLoops[4]), fmt.Sprint([]float64{0, 0, w, w}); got != want {
		t.Errorf("buffer success: %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(noLoops[5]), fmt.Sprint(episode[5]); got != want {
		t.Errorf("buffer failure: %s, want %s (a loop in a failure keeps its blame)", got, want)
	}
}
