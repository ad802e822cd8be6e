package policy

import (
	"math"
	"testing"
)

// TestForwardActions checks that ForwardActions gives Forward's
// distribution, and that Backward with a value gradient after it gives
// what it gives after Forward.
func TestForwardActions(t *testing.T) {
	p := trainedPolicy(t)
	f, err := p.NewFeaturizer().Features(testState())
	if err != nil {
		t.Fatal(err)
	}
	var full, acts Pass
	p.Forward(f, &full)
	acts.Value = 123 // left alone
	p.ForwardActions(f, &acts)
	sameBits(t, "log-probs", acts.LogProbs, full.LogProbs)
	if acts.Value != 123 {
		t.Fatalf("ForwardActions set the value to %v", acts.Value)
	}
	d := make([]float64, f.NumActions())
	AddLogProbGrad(d, full.LogProbs, 1, 0.7)
	g1, g2 := p.NewGrads(), p.NewGrads()
	if err := p.Backward(&full, d, 0.3, g1); err != nil {
		t.Fatal(err)
	}
	if err := p.Backward(&acts, d, 0.3, g2); err != nil {
		t.Fatal(err)
	}
	sameBits(t, "gradient", g2.data, g1.data)
	if math.Float64bits(acts.Value) != math.Float64bits(full.Value) {
		t.Fatalf("value after Backward: %v, want %v", acts.Value, full.Value)
	}
}
