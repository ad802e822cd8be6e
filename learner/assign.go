package learner

import "github.com/rspo-dev/rspo/schemas"

// assignAdvantages fills every sample's per-step advantages (and PPO's value
// targets) according to the configured algorithm.
func (t *Trainer) assignAdvantages(samples []*sample, groups []*group) {
	switch t.cfg.Algo {
	case PPO:
		t.assignPPO(samples)
	case GiGPO:
		t.assignEpisode(samples, groups)
		t.addStepAdvantages(samples, groups)
	default:
		t.assignEpisode(samples, groups)
	}
	if t.cfg.OffCredit == OffCreditNoLoops {
		noLoopCredit(samples)
	}
}

// assignEpisode gives every step of a sample its group-normalised return
// (GRPO, and GiGPO's episode part).
func (t *Trainer) assignEpisode(samples []*sample, groups []*group) {
	var pool []float64 // on-policy returns, the fallback baseline
	for _, s := range samples {
		if !s.off {
			pool = append(pool, s.ret)
		}
	}
	for _, g := range groups {
		rets := make([]float64, 0, len(g.members)+len(pool))
		for _, i := range g.members {
			rets = append(rets, samples[i].ret)
		}
		if !g.hasOn {
			if t.cfg.OffPolicyFallback == FallbackDrop {
				rets = rets[:0]
			} else {
				rets = append(rets, pool...)
			}
		}
		adv, _, _ := Normalize(rets, t.cfg.MinGroupStd, t.cfg.AdvEps)
		for k, i := range g.members {
			s := samples[i]
			s.adv = make([]float64, len(s.rewards))
			if k < len(adv) {
				fill(s.adv, adv[k])
			}
		}
	}
}

// addStepAdvantages adds GiGPO's step advantage: the discounted return from
// each step, normalised among the steps of the same group that share a
// state key (steps with StateKey 0 have no anchor and get none).
func (t *Trainer) addStepAdvantages(samples []*sample, groups []*group) {
	type ref struct{ s, t int }
	for _, g := range groups {
		anchors := map[uint64][]ref{}
		var keys []uint64 // in first-seen order, for determinism
		returns := make(map[int][]float64, len(g.members))
		for _, i := range g.members {
			s := samples[i]
			returns[i] = DiscountedReturns(s.rewards, t.cfg.Gamma)
			for k, st := range s.t.Steps {
				if st.StateKey == 0 {
					continue
				}
				if _, ok := anchors[st.StateKey]; !ok {
					keys = append(keys, st.StateKey)
				}
				anchors[st.StateKey] = append(anchors[st.StateKey], ref{i, k})
			}
		}
		for _, key := range keys {
			refs := anchors[key]
			vals := make([]float64, len(refs))
			for j, r := range refs {
				vals[j] = returns[r.s][r.t]
			}
			adv, _, _ := Normalize(vals, t.cfg.MinGroupStd, t.cfg.AdvEps)
			for j, r := range refs {
				samples[r.s].adv[r.t] += t.cfg.StepWeight * adv[j]
			}
		}
	}
}

// assignPPO computes GAE advantages and value targets from V_old, then
// whitens the advantages over the on-policy steps (all steps if there are
// none) unless KeepRawAdvantages is set.
func (t *Trainer) assignPPO(samples []*sample) {
	var m moments
	anyOn := false
	for _, s := range samples {
		anyOn = anyOn || !s.off
	}
	for _, s := range samples {
		s.adv, s.targets = GAE(s.rewards, s.values, t.cfg.Gamma, t.cfg.Lambda)
		if !s.off || !anyOn {
			for _, a := range s.adv {
				m.add(a)
			}
		}
	}
	if t.cfg.KeepRawAdvantages {
		return
	}
	mean, std := m.meanStd()
	for _, s := range samples {
		for i, a := range s.adv {
			if std < t.cfg.MinGroupStd || std == 0 {
				s.adv[i] = 0
			} else {
				s.adv[i] = (a - mean) / (std + t.cfg.AdvEps)
			}
		}
	}
}

func fill(v []float64, x float64) {
	for i := range v {
		v[i] = x
	}
}

// loopSteps marks the steps of t that a shorter trajectory of the same
// end does without: from each state (by StateKey; 0 is no key and matches
// nothing) only the step taken at its last visit counts, and the steps
// from the state it leads to on; everything between is a detour that came
// back (re-clicking a selected option, taking an object and putting it
// back). States are the environment's whole state, so the kept steps are
// a valid trajectory themselves: the marked ones cannot have brought the
// outcome about.
func loopSteps(t *schemas.Trajectory) []bool {
	last := make(map[uint64]int, len(t.Steps))
	for i, st := range t.Steps {
		if st.StateKey != 0 {
			last[st.StateKey] = i
		}
	}
	loop := make([]bool, len(t.Steps))
	for i := range loop {
		loop[i] = true
	}
	for i := 0; i < len(t.Steps); i++ {
		if j, ok := last[t.Steps[i].StateKey]; ok {
			i = j // the detour i..j-1 came back to this state
		}
		loop[i] = false
	}
	return loop
}

// onLoop returns loopSteps of the sample's trajectory, computed once for
// both the credit rule and the batch's statistics.
func (s *sample) onLoop() []bool {
	if s.loops == nil {
		s.loops = loopSteps(s.t)
	}
	return s.loops
}

// noLoopCredit takes the positive advantage off the loop steps of every
// off-policy sample. The buffer replays mostly successes, so the actions of
// a success would be reinforced whether or not they helped; a loop step
// demonstrably did not. A loop in a failure keeps its negative advantage.
func noLoopCredit(samples []*sample) {
	for _, s := range samples {
		if !s.off {
			continue
		}
		for i, inLoop := range s.onLoop() {
			if inLoop && i < len(s.adv) && s.adv[i] > 0 {
				s.adv[i] = 0
			}
		}
	}
}
