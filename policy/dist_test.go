package policy

import (
	"math"
	"math/rand/v2"
	"testing"
)

func randomLogProbs(rng *rand.Rand, n int, scale float64) []float64 {
	lp := make([]float64, n)
	for i := range lp {
		lp[i] = rng.NormFloat64() * scale
	}
	logSoftmax(lp, make([]float64, n))
	return lp
}

func TestKLNonNegativeAndZeroAgainstItself(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		n := 1 + rng.IntN(20)
		p, q := randomLogProbs(rng, n, 3), randomLogProbs(rng, n, 3)
		if kl := KL(p, q); kl < 0 || math.IsNaN(kl) {
			t.Fatalf("case %d: got KL %v, want ≥ 0", i, kl)
		}
		if kl := KL(p, p); kl != 0 {
			t.Fatalf("case %d: got KL(p‖p) = %v, want 0", i, kl)
		}
	}
}

func TestKLAgainstPolicyItself(t *testing.T) {
	p := newTestPolicy(t, Config{})
	randomize(p, 4)
	ref := p.Clone()
	s := testState()
	_, lp, _ := p.Distribution(s)
	_, lq, _ := ref.Distribution(s)
	if kl := KL(lp, lq); kl != 0 {
		t.Fatalf("got KL(π‖clone) = %v, want 0", kl)
	}
	ref.params[ref.lay.w2] += 1
	_, lq, _ = ref.Distribution(s)
	if kl := KL(lp, lq); !(kl > 0) {
		t.Fatalf("got KL(π‖changed) = %v, want > 0", kl)
	}
}

func TestEntropy(t *testing.T) {
	tests := []struct {
		name string
		lp   []float64
		want float64
	}{
		{name: "uniform of 4", lp: []float64{math.Log(.25), math.Log(.25), math.Log(.25), math.Log(.25)}, want: math.Log(4)},
		{name: "certain", lp: []float64{0, math.Inf(-1)}, want: 0},
		{name: "single action", lp: []float64{0}, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Entropy(tt.lp); math.Abs(got-tt.want) > 1e-12 {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSampleIndexFollowsProbabilities(t *testing.T) {
	probs := []float64{0.1, 0.6, 0, 0.3}
	rng := rand.New(rand.NewPCG(3, 3))
	counts := make([]int, len(probs))
	const n = 20000
	for range n {
		counts[SampleIndex(probs, rng)]++
	}
	for a, p := range probs {
		got := float64(counts[a]) / n
		if math.Abs(got-p) > 0.02 {
			t.Errorf("action %d: got frequency %.3f, want %.3f", a, got, p)
		}
	}
	if counts[2] != 0 {
		t.Errorf("zero-probability action drawn %d times", counts[2])
	}
}
