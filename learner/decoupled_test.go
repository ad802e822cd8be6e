package learner

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
)

// The decoupled objective w·min(r·A, clip(r, 1±ε)·A), r = π_θ/π_prox,
// w = π_prox/π_behav, is the clip of ρ = π_θ/π_behav to w(1±ε).
func TestDecoupledSurrogateIsTheScaledClipAroundProx(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for i := range 10000 {
		logBehav := -rng.Float64() * 4
		logProx := logBehav + rng.NormFloat64()*0.4
		logP := logProx + rng.NormFloat64()*0.3
		adv, eps := rng.NormFloat64(), 0.05+rng.Float64()*0.3
		obj, d, ratio, clipped := decoupledSurrogate(logP, logProx, logBehav, eps, adv)
		w, rho := math.Exp(logProx-logBehav), math.Exp(logP-logBehav)
		want := math.Min(rho*adv, math.Max(w*(1-eps), math.Min(rho, w*(1+eps)))*adv)
		if !near(obj, want, 1e-9*math.Max(1, math.Abs(want))) {
			t.Fatalf("case %d: objective %v, want %v", i, obj, want)
		}
		if !near(ratio, math.Exp(logP-logProx), 1e-12) {
			t.Fatalf("case %d: ratio %v, want π_θ/π_prox %v", i, ratio, math.Exp(logP-logProx))
		}
		if wantD := rho * adv; clipped && d != 0 || !clipped && !near(d, wantD, 1e-9*math.Max(1, math.Abs(wantD))) {
			t.Fatalf("case %d: d/dlogP %v (clipped %v), want %v unclipped", i, d, clipped, wantD)
		}
	}
}

// Decoupled changes nothing for rollouts of the policy's own version: the
// plain on-policy arithmetic, bit for bit, update after update.
func TestDecoupledLagZeroIsPlain(t *testing.T) {
	env, tasks := courierTasks(t, 3, 7)
	run := func(decoupled bool) (string, []UpdateStats) {
		p := smallPolicy(t, 8)
		tr := newTrainer(t, p, Config{Epochs: 2, MiniBatches: 2, Decoupled: decoupled})
		var stats []UpdateStats
		for u := range 3 {
			st, err := tr.Update(collect(t, env, tasks, p, 4, int64(u+1), schemas.SourceOnPolicy), nil)
			if err != nil {
				t.Fatal(err)
			}
			stats = append(stats, st)
		}
		b, _ := p.MarshalBinary()
		return string(b), stats
	}
	plain, sp := run(false)
	dec, sd := run(true)
	if plain != dec {
		t.Fatal("decoupled training of lag-0 rollouts differs from the plain objective")
	}
	for i := range sp {
		if sp[i] != sd[i] {
			t.Fatalf("update %d: plain %+v, decoupled %+v", i+1, sp[i], sd[i])
		}
	}
}

// Rollouts one version old: the plain objective takes its ratio against
// the stale behaviour (away from 1, so the clip binds from the start),
// the decoupled one against π_prox, the policy before the update (exactly
// 1 in the first epoch, nothing clipped). Their gradients agree at
// θ = θ_prox where nothing is clipped (w·r = ρ), so they part where the
// plain clip binds: they train different policies.
func TestDecoupledCentresStaleStepsOnTheProximalPolicy(t *testing.T) {
	group := func(name string) []*schemas.Trajectory { // a group with a signal: two successes, two failures
		var g []*schemas.Trajectory
		for i := range 4 {
			g = append(g, fakeTrajectory(name+string(rune('a'+i)), name, name, i%2 == 0, 3))
		}
		return g
	}
	p1 := smallPolicy(t, 10)
	stale := group("old") // played by version 0, which made "look" likelier than the others
	for _, tr := range stale {
		for j := range tr.Steps {
			tr.Steps[j].BehaviorLogProb = math.Log(0.6)
		}
	}
	st, err := newTrainer(t, p1, Config{LR: 0.3}).Update(group("first"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if p1.Version() != 1 || st.ZeroAdvGroupFrac == 1 {
		t.Fatalf("policy version %d, zero-advantage groups %v: want version 1 trained on some signal", p1.Version(), st.ZeroAdvGroupFrac)
	}
	update := func(decoupled bool) (UpdateStats, string) {
		p := p1.Clone()
		st, err := newTrainer(t, p, Config{Beta: NoKL, Decoupled: decoupled}).Update(stale, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := p.MarshalBinary()
		return st, string(b)
	}
	plain, pPlain := update(false)
	dec, pDec := update(true)
	if plain.RatioMeanOn == 1 || !(plain.ClipFracOn > 0) {
		t.Errorf("plain objective on stale rollouts: ratio mean %v, clip fraction %v; want π_θ/π_behav away from 1, clipped", plain.RatioMeanOn, plain.ClipFracOn)
	}
	if dec.RatioMeanOn != 1 || dec.ClipFracOn != 0 {
		t.Errorf("decoupled: ratio mean %v, clip fraction %v; want exactly 1 and 0 (r = π_θ/π_prox)", dec.RatioMeanOn, dec.ClipFracOn)
	}
	if pPlain == pDec {
		t.Error("decoupled and plain objectives trained the same policy on stale rollouts")
	}
}

// With several optimiser steps the update computes log π_prox of every
// stale step before the first one: the policy's own log-prob then.
func TestDecoupledProximalPass(t *testing.T) {
	p := smallPolicy(t, 11)
	p.SetVersion(3)
	tr := newTrainer(t, p, Config{Epochs: 2, Decoupled: true})
	old, fresh := fakeTrajectory("a", "t", "g", true, 3), fakeTrajectory("b", "t", "g", false, 3)
	old.PolicyVersion, fresh.PolicyVersion = 1, 3
	samples, err := tr.prepare([]*schemas.Trajectory{old, fresh}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr.oldPass(samples)
	if !samples[0].stale || samples[1].stale || samples[1].proxLogP != nil {
		t.Fatalf("stale: version 1 %v, version 3 %v (π_prox %v); want only version 1's", samples[0].stale, samples[1].stale, samples[1].proxLogP)
	}
	var ps policy.Pass
	for j, f := range samples[0].feats {
		p.ForwardActions(f, &ps)
		if got, want := samples[0].proxLogP[j], ps.LogProbs[old.Steps[j].ActionIndex]; got != want {
			t.Errorf("step %d: log π_prox %v, want the policy's %v", j, got, want)
		}
	}
}
