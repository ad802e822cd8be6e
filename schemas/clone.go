package schemas

import "slices"

// Clone returns a deep copy of t: no slice of the copy shares memory with t,
// so either may be modified freely. Nil slices stay nil. Clone(nil) is nil.
func (t *Trajectory) Clone() *Trajectory {
	if t == nil {
		return nil
	}
	c := *t
	if t.Steps != nil {
		c.Steps = make([]Step, len(t.Steps))
		for i := range t.Steps {
			c.Steps[i] = t.Steps[i].clone()
		}
	}
	return &c
}

// clone returns a deep copy of s.
func (s Step) clone() Step {
	s.Admissible = slices.Clone(s.Admissible)
	s.TokenIDs = slices.Clone(s.TokenIDs)
	s.TokenLogProbs = slices.Clone(s.TokenLogProbs)
	return s
}
