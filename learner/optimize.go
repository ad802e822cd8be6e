package learner

import "github.com/rspo-dev/rspo/policy"

// optimize runs the epochs and minibatches of one update and returns the
// per-step figures.
func (t *Trainer) optimize(samples []*sample) UpdateStats {
	var on, off []int
	for i, s := range samples {
		if s.off {
			off = append(off, i)
		} else {
			on = append(on, i)
		}
	}
	acc := &accum{}
	var loss, norm, vloss running
	normMax := 0.0
	m := t.cfg.MiniBatches
	for range t.cfg.Epochs {
		if m > 1 {
			t.rng.Shuffle(len(on), func(i, j int) { on[i], on[j] = on[j], on[i] })
			t.rng.Shuffle(len(off), func(i, j int) { off[i], off[j] = off[j], off[i] })
		}
		for b := range m {
			onB, offB := chunk(on, b, m), chunk(off, b, m)
			if len(onB)+len(offB) == 0 {
				continue
			}
			t.grads.Zero()
			l, vl := t.accumulate(samples, onB, offB, t.grads, acc)
			n := t.grads.ClipNorm(t.cfg.MaxGradNorm)
			_ = t.opt.Step(t.pol, t.grads) // shapes match by construction
			loss.add(l)
			vloss.add(vl)
			norm.add(n)
			normMax = max(normMax, n)
		}
	}
	st := acc.stats()
	st.Loss, st.ValueLoss, st.GradNorm, st.GradNormMax = loss.mean(), vloss.mean(), norm.mean(), normMax
	return st
}

// chunk returns the b-th of m near-equal parts of idx.
func chunk(idx []int, b, m int) []int {
	return idx[b*len(idx)/m : (b+1)*len(idx)/m]
}

// accum gathers per-step figures across minibatches and epochs.
type accum struct{ on, off stepStats }

func (a *accum) merge(o *accum) {
	a.on.merge(&o.on)
	a.off.merge(&o.off)
}

func (a *accum) stats() UpdateStats {
	return UpdateStats{
		RatioMeanOn: a.on.ratio.mean(), RatioMeanOff: a.off.ratio.mean(), CMeanOff: a.off.c.mean(),
		ClipFracOn: a.on.clip.mean(), ClipFracOff: a.off.clip.mean(),
		KLOn: a.on.kl.mean(), KLOff: a.off.kl.mean(),
		EntropyOn: a.on.entropy.mean(), EntropyOff: a.off.entropy.mean(),
	}
}

// accumulate runs forward and backward over the steps of one minibatch,
// adding the gradient of the loss to g (when g is not nil), and returns the
// loss and the value loss:
//
//	loss = −[(1−α)·mean_on J_t + α·mean_off J_t] + c_V·mean_on ½(V−target)²
//	J_t  = surrogate_t − β·KL_t + c_H·H_t
//
// With only one kind of data present, its mean has weight 1. With several
// workers each takes a contiguous share of the trajectories into its own
// gradient, and the shares are summed in worker order.
func (t *Trainer) accumulate(samples []*sample, on, off []int, g *policy.Grads, acc *accum) (loss, vloss float64) {
	nOn, nOff := countSteps(samples, on), countSteps(samples, off)
	wOn, wOff := 1/float64(max(nOn, 1)), 1/float64(max(nOff, 1))
	if nOn > 0 && nOff > 0 {
		wOn *= 1 - t.cfg.Alpha
		wOff *= t.cfg.Alpha
	}
	mb := minibatch{samples: samples, wOn: wOn, wOff: wOff, nOn: nOn}
	if len(t.work) <= 1 {
		return t.sweep(mb, on, off, g, acc, &t.work[0].ps)
	}
	results := make([][2]float64, len(t.work))
	t.parallel(func(w int) {
		wk := t.work[w]
		wk.acc = accum{}
		var wg *policy.Grads
		if g != nil {
			wk.g.Zero()
			wg = wk.g
		}
		k := len(t.work)
		l, vl := t.sweep(mb, chunk(on, w, k), chunk(off, w, k), wg, &wk.acc, &wk.ps)
		results[w] = [2]float64{l, vl}
	})
	for w, wk := range t.work {
		if g != nil {
			_ = g.Add(wk.g) // shapes match by construction
		}
		acc.merge(&wk.acc)
		loss += results[w][0]
		vloss += results[w][1]
	}
	return loss, vloss
}

// minibatch carries what every step of a minibatch is weighted by.
type minibatch struct {
	samples   []*sample
	wOn, wOff float64
	nOn       int
}

// sweep runs forward and backward over the given on- and off-policy
// samples, in ps.
func (t *Trainer) sweep(mb minibatch, on, off []int, g *policy.Grads, acc *accum, ps *policy.Pass) (loss, vloss float64) {
	var d []float64
	for k, idx := range [][]int{on, off} {
		w, st := mb.wOn, &acc.on
		if k == 1 {
			w, st = mb.wOff, &acc.off
		}
		for _, i := range idx {
			s := mb.samples[i]
			for j, f := range s.feats {
				if t.cfg.Algo == PPO {
					t.pol.Forward(f, ps)
				} else {
					t.pol.ForwardActions(f, ps) // only PPO has a value loss
				}
				d = resize(d, len(ps.LogProbs))
				l, dv, vl := t.stepLoss(s, j, ps, w, mb.nOn, d, st)
				loss += l
				vloss += vl
				if g != nil {
					_ = t.pol.Backward(ps, d, dv, g) // shapes match by construction
				}
			}
		}
	}
	return loss, vloss
}

// stepLoss is one step's contribution to the loss, with its gradient with
// respect to the logits written into d and with respect to the value
// returned as dv.
func (t *Trainer) stepLoss(s *sample, j int, ps *policy.Pass, w float64, nOn int, d []float64, st *stepStats) (loss, dv, vloss float64) {
	c := &t.cfg
	a := int(s.t.Steps[j].ActionIndex)
	logP, adv := ps.LogProbs[a], s.adv[j]
	var obj, dLogP, ratio float64
	var clipped bool
	switch {
	case s.off && c.OffRatio == OffRatioOld:
		obj, dLogP, ratio, clipped = Surrogate(logP, s.oldLogP[j], 0, c.EpsOff, adv)
		st.c.add(exp(s.oldLogP[j] - s.behLogP[j]))
	case s.off:
		logC := s.oldLogP[j] - s.behLogP[j]
		obj, dLogP, ratio, clipped = Surrogate(logP, s.behLogP[j], logC, c.EpsOff, adv)
		st.c.add(exp(logC))
	case s.stale:
		logProx := logP // one pass: the policy is still π_prox
		if s.proxLogP != nil {
			logProx = s.proxLogP[j]
		}
		obj, dLogP, ratio, clipped = decoupledSurrogate(logP, logProx, s.behLogP[j], c.EpsOn, adv)
	default:
		obj, dLogP, ratio, clipped = Surrogate(logP, s.oldLogP[j], 0, c.EpsOn, adv)
	}
	kl, h := policy.KL(ps.LogProbs, s.refLogP[j]), policy.Entropy(ps.LogProbs)
	loss = -w * (obj - c.Beta*kl + c.EntropyCoef*h)
	if s.swap != nil && s.swap[j] != 0 {
		loss -= w * s.swap[j] * logP
		dLogP += s.swap[j]
	}
	policy.AddLogProbGrad(d, ps.LogProbs, a, -w*dLogP)
	if c.Beta > 0 {
		policy.AddKLGrad(d, ps.LogProbs, s.refLogP[j], w*c.Beta)
	}
	if c.EntropyCoef > 0 {
		policy.AddEntropyGrad(d, ps.LogProbs, -w*c.EntropyCoef)
	}
	if c.Algo == PPO && !s.off && c.ValueCoef > 0 {
		e := ps.Value - s.targets[j]
		vloss = 0.5 * e * e / float64(nOn)
		loss += c.ValueCoef * vloss
		dv = c.ValueCoef * e / float64(nOn)
	}
	st.ratio.add(ratio)
	st.clip.add(b2f(clipped))
	st.kl.add(kl)
	st.entropy.add(h)
	return loss, dv, vloss
}

func countSteps(samples []*sample, idx []int) int {
	n := 0
	for _, i := range idx {
		n += len(samples[i].feats)
	}
	return n
}

func resize(d []float64, n int) []float64 {
	if cap(d) < n {
		d = make([]float64, n)
	}
	d = d[:n]
	clear(d)
	return d
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
