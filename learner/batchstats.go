package learner

import "math"

func exp(x float64) float64 { return math.Exp(min(x, maxLogRatio)) }

// batchStats fills the figures that describe the batch itself: sizes,
// advantages, returns, success and the group fractions.
func (t *Trainer) batchStats(st *UpdateStats, samples []*sample, groups []*group) {
	var advOn, advOff moments
	var retOn, retOff, succOn, succOff, vals, loops running
	offTasks := map[string][]bool{}
	var offOrder []string
	for _, s := range samples {
		adv, ret, succ := &advOn, &retOn, &succOn
		if s.off {
			adv, ret, succ = &advOff, &retOff, &succOff
			st.OffTrajectories++
			st.OffSteps += float64(len(s.t.Steps))
			if _, ok := offTasks[s.t.TaskID]; !ok {
				offOrder = append(offOrder, s.t.TaskID)
			}
			offTasks[s.t.TaskID] = append(offTasks[s.t.TaskID], s.t.Success)
			for _, inLoop := range s.onLoop() {
				loops.add(b2f(inLoop))
			}
		} else {
			st.OnTrajectories++
			st.OnSteps += float64(len(s.t.Steps))
			for _, v := range s.values {
				vals.add(v)
			}
		}
		for _, a := range s.adv {
			adv.add(a)
		}
		ret.add(s.ret)
		succ.add(b2f(s.t.Success))
	}
	st.AdvMeanOn, st.AdvStdOn = advOn.meanStd()
	st.AdvMeanOff, st.AdvStdOff = advOff.meanStd()
	st.ReturnMeanOn, st.ReturnMeanOff = retOn.mean(), retOff.mean()
	st.SuccessOn, st.SuccessOff = succOn.mean(), succOff.mean()
	st.ValueMean = vals.mean()
	st.OffLoopFrac = loops.mean()
	var failOn, allOn, zero, failOff, allOff running
	for _, g := range groups {
		zero.add(b2f(allZeroAdv(samples, g)))
		if !g.hasOn {
			st.OffFallback += float64(len(g.members))
			continue
		}
		var succ []bool
		for _, i := range g.members {
			if !samples[i].off {
				succ = append(succ, samples[i].t.Success)
			}
		}
		f, a := allSame(succ)
		failOn.add(b2f(f))
		allOn.add(b2f(a))
	}
	for _, task := range offOrder {
		f, a := allSame(offTasks[task])
		failOff.add(b2f(f))
		allOff.add(b2f(a))
	}
	st.AllFailFracOn, st.AllSuccessFracOn = failOn.mean(), allOn.mean()
	st.AllFailFracOff, st.AllSuccessFracOff = failOff.mean(), allOff.mean()
	st.ZeroAdvGroupFrac = zero.mean()
}

// allSame reports whether every outcome failed and whether every one succeeded.
func allSame(succ []bool) (allFail, allSuccess bool) {
	allFail, allSuccess = true, true
	for _, s := range succ {
		allFail = allFail && !s
		allSuccess = allSuccess && s
	}
	return allFail, allSuccess
}

func allZeroAdv(samples []*sample, g *group) bool {
	for _, i := range g.members {
		for _, a := range samples[i].adv {
			if a != 0 {
				return false
			}
		}
	}
	return true
}
