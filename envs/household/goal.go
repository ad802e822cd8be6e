package household

// goalHolds reports whether the task's goal is met in the current state.
//
//   - look_at_obj_in_light: the agent holds an object of the task's kind at
//     the receptacle of a switched-on desklamp;
//   - pick_two_and_place: one receptacle of the target kind holds two
//     objects of the task's kind;
//   - the others: a receptacle of the target kind holds an object of the
//     task's kind in the required state (clean, hot, cool, or any).
func (e *episode) goalHolds() bool {
	s := e.w.spec
	switch s.typ {
	case lookAtObjInLight:
		l := e.w.lamp
		return e.hand >= 0 && e.w.objs[e.hand].kind == s.obj &&
			e.at >= 0 && e.objAt[l] == e.at && e.flags[l]&flagOn != 0
	case pickTwoAndPlace:
		for r, rc := range e.w.receps {
			if rc.kind == s.target && e.countAt(s.obj, int16(r)) >= 2 {
				return true
			}
		}
		return false
	}
	need := s.typ.needFlag()
	for o, at := range e.objAt {
		if at >= 0 && e.w.objs[o].kind == s.obj && e.w.receps[at].kind == s.target && e.flags[o]&need == need {
			return true
		}
	}
	return false
}

// countAt counts the objects of kind k in receptacle r.
func (e *episode) countAt(k okind, r int16) int {
	n := 0
	for o, at := range e.objAt {
		if at == r && e.w.objs[o].kind == k {
			n++
		}
	}
	return n
}
