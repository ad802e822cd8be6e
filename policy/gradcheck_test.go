package policy

import (
	"math"
	"math/rand/v2"
	"testing"
)

// lossFn is a scalar function of a forward pass with its gradient with
// respect to the logits and the value.
type lossFn func(ps *Pass) (loss float64, dLogits []float64, dValue float64)

// mixedLoss exercises every gradient helper: weighted log-probs of every
// action, KL to a fixed distribution, entropy, and a squared value error.
func mixedLoss(weights, logQ []float64) lossFn {
	return func(ps *Pass) (float64, []float64, float64) {
		d := make([]float64, len(ps.LogProbs))
		loss := 0.0
		for a, w := range weights {
			loss += w * ps.LogProbs[a]
			AddLogProbGrad(d, ps.LogProbs, a, w)
		}
		loss += 0.7*KL(ps.LogProbs, logQ) - 0.3*Entropy(ps.LogProbs)
		AddKLGrad(d, ps.LogProbs, logQ, 0.7)
		AddEntropyGrad(d, ps.LogProbs, -0.3)
		e := ps.Value - 0.3
		return loss + 1.5*e*e, d, 3 * e
	}
}

func TestGradientCheck(t *testing.T) {
	p := newTestPolicy(t, Config{Buckets: 512, EmbedDim: 4, Hidden: 5, Temperature: 0.7})
	randomize(p, 11)
	s := testState()
	f, err := p.NewFeaturizer().Features(s)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	weights := make([]float64, len(s.Admissible))
	logQ := make([]float64, len(s.Admissible))
	for a := range weights {
		weights[a] = rng.NormFloat64()
		logQ[a] = rng.NormFloat64()
	}
	logSoftmax(logQ, make([]float64, len(logQ)))
	checkGradient(t, p, f, mixedLoss(weights, logQ))
}

// checkGradient compares Backward with central finite differences on every
// parameter of the rows the state uses, every dense parameter, and a few
// unused rows (whose gradient must be exactly zero).
func checkGradient(t *testing.T, p *Policy, f *Features, loss lossFn) {
	t.Helper()
	var ps Pass
	p.Forward(f, &ps)
	_, dl, dv := loss(&ps)
	g := p.NewGrads()
	if err := p.Backward(&ps, dl, dv, g); err != nil {
		t.Fatal(err)
	}
	eval := func() float64 {
		var q Pass
		p.Forward(f, &q)
		l, _, _ := loss(&q)
		return l
	}
	const h = 1e-6
	worst, checked := 0.0, 0
	for _, i := range paramsToCheck(p, f) {
		orig := p.params[i]
		p.params[i] = orig + h
		up := eval()
		p.params[i] = orig - h
		down := eval()
		p.params[i] = orig
		num, ana := (up-down)/(2*h), g.data[i]
		if err := math.Abs(num - ana); err > 1e-6+1e-5*math.Abs(num) {
			t.Errorf("param %d: got analytic %.9g, want numeric %.9g", i, ana, num)
		} else {
			worst = max(worst, err)
		}
		checked++
	}
	t.Logf("checked %d parameters, worst abs error %.2g", checked, worst)
}

func paramsToCheck(p *Policy, f *Features) []int {
	l := &p.lay
	used := map[int32]bool{}
	for _, id := range f.state {
		used[id] = true
	}
	for _, id := range f.actIDs {
		used[id] = true
	}
	for r := int32(0); len(used) < len(f.state)+len(f.actIDs)+3 && r < int32(l.buckets); r++ {
		used[r] = true // a few rows, usually unused ones
	}
	var idx []int
	for r := range used {
		for i := l.emb(r); i < l.emb(r)+l.row; i++ {
			idx = append(idx, i)
		}
	}
	for i := l.sparse; i < l.total; i++ {
		idx = append(idx, i)
	}
	return idx
}
