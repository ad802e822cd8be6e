package learner

import (
	"math"
	"math/rand/v2"
	"testing"
)

// standardClip is the textbook PPO clip, computed with ratios.
func standardClip(ratio, eps, adv float64) float64 {
	return math.Min(ratio*adv, math.Max(1-eps, math.Min(ratio, 1+eps))*adv)
}

func TestGeneralizedClipEqualsStandardWhenBehaviourIsOld(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range 10000 {
		logOld := -rng.Float64() * 5
		logP := logOld + rng.NormFloat64()*0.5
		adv := rng.NormFloat64()
		eps := 0.05 + rng.Float64()*0.3
		// Off-policy with π_B = π_old: base π_B, centre c = π_old/π_B = 1.
		gen, dGen, _, _ := Surrogate(logP, logOld, logOld-logOld, eps, adv)
		on, dOn, _, _ := Surrogate(logP, logOld, 0, eps, adv)
		want := standardClip(math.Exp(logP-logOld), eps, adv)
		if !near(gen, want, 1e-12) || gen != on || dGen != dOn {
			t.Fatalf("case %d: generalized %v (d %v), on-policy %v (d %v), textbook %v", i, gen, dGen, on, dOn, want)
		}
	}
}

func TestSurrogateClipping(t *testing.T) {
	// Off-policy interval centred at c = 0.5 with ε = 0.1: [0.4, 0.6].
	logC := math.Log(0.5)
	tests := []struct {
		name    string
		ratio   float64
		adv     float64
		clipped bool
		obj     float64
	}{
		{name: "above interval, positive advantage: clipped", ratio: 0.8, adv: 1, clipped: true, obj: 0.6},
		{name: "above interval, negative advantage: kept", ratio: 0.8, adv: -1, clipped: false, obj: -0.8},
		{name: "below interval, negative advantage: clipped", ratio: 0.2, adv: -1, clipped: true, obj: -0.4},
		{name: "below interval, positive advantage: kept", ratio: 0.2, adv: 1, clipped: false, obj: 0.2},
		{name: "inside interval, positive", ratio: 0.55, adv: 2, clipped: false, obj: 1.1},
		{name: "inside interval, negative", ratio: 0.45, adv: -2, clipped: false, obj: -0.9},
		{name: "standard interval would clip 0.8 below 1−ε, this one keeps it", ratio: 0.8, adv: -1, clipped: false, obj: -0.8},
		{name: "zero advantage", ratio: 3, adv: 0, clipped: false, obj: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logB := -2.0
			obj, d, ratio, clipped := Surrogate(logB+math.Log(tt.ratio), logB, logC, 0.1, tt.adv)
			if clipped != tt.clipped || !near(obj, tt.obj, 1e-12) || !near(ratio, tt.ratio, 1e-12) {
				t.Fatalf("got obj %v clipped %v ratio %v, want %v %v %v", obj, clipped, ratio, tt.obj, tt.clipped, tt.ratio)
			}
			if wantD := tt.ratio * tt.adv; clipped && d != 0 || !clipped && !near(d, wantD, 1e-12) {
				t.Fatalf("got gradient %v, want %v", d, map[bool]float64{true: 0, false: wantD}[clipped])
			}
		})
	}
}

func TestSurrogateFiniteForExtremeRatios(t *testing.T) {
	obj, d, ratio, _ := Surrogate(0, -1e6, 1e6, 0.1, -1)
	for _, v := range []float64{obj, d, ratio} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("got obj %v d %v ratio %v, want finite", obj, d, ratio)
		}
	}
}
