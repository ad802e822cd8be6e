package schemas

import (
	"reflect"
	"testing"
)

func TestClone(t *testing.T) {
	orig := fixture()
	c := orig.Clone()
	if !reflect.DeepEqual(c, orig) {
		t.Fatalf("clone differs:\ngot  %s\nwant %s", describe(c), describe(orig))
	}
	c.Steps[0].Admissible[0] = "changed"
	c.Steps[1].TokenIDs[0] = 9
	c.Steps[1].TokenLogProbs[0] = -9
	c.Steps[2].Reward = -1
	c.Steps = append(c.Steps, Step{})
	if !reflect.DeepEqual(orig, fixture()) {
		t.Errorf("modifying the clone changed the original:\n%s", describe(orig))
	}
}

func TestCloneKeepsNilAndEmpty(t *testing.T) {
	var nilT *Trajectory
	if nilT.Clone() != nil {
		t.Error("Clone(nil): got non-nil, want nil")
	}
	tr := &Trajectory{Steps: []Step{{Admissible: []string{}, TokenIDs: nil}}}
	c := tr.Clone()
	if c.Steps[0].Admissible == nil || len(c.Steps[0].Admissible) != 0 {
		t.Errorf("empty admissible: got %#v, want []string{}", c.Steps[0].Admissible)
	}
	if c.Steps[0].TokenIDs != nil {
		t.Errorf("nil token ids: got %#v, want nil", c.Steps[0].TokenIDs)
	}
	if c := (&Trajectory{}).Clone(); c.Steps != nil {
		t.Errorf("nil steps: got %#v, want nil", c.Steps)
	}
}

func TestStateStats(t *testing.T) {
	steps := func(keys ...uint64) []Step {
		s := make([]Step, len(keys))
		for i, k := range keys {
			s[i].StateKey = k
		}
		return s
	}
	tests := []struct {
		name               string
		steps              []Step
		distinct, repeated int32
	}{
		{"none", nil, 0, 0},
		{"one", steps(5), 1, 0},
		{"all distinct", steps(1, 2, 3), 3, 0},
		{"loop", steps(1, 2, 1, 2, 1), 2, 3},
		{"stuck", steps(7, 7, 7, 7), 1, 3},
		{"zero and max keys", steps(0, ^uint64(0), 0), 2, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, r := StateStats(tc.steps)
			if d != tc.distinct || r != tc.repeated {
				t.Errorf("got (%d, %d), want (%d, %d)", d, r, tc.distinct, tc.repeated)
			}
		})
	}
	s := steps(3, 1, 2)
	StateStats(s)
	if s[0].StateKey != 3 || s[1].StateKey != 1 {
		t.Errorf("StateStats reordered its input: %v", s)
	}
}
