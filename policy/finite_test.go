package policy

import (
	"errors"
	"math"
	"testing"
)

// A parameter that is NaN, infinite or beyond the float32 range makes the
// policy unsnapshottable: CheckFinite and MarshalBinary say so, where
// before the snapshot was written and only its Load failed.
func TestNonFinitePolicyIsNotMarshalled(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e39, -1e300} {
		for _, i := range []int{0, -1} { // a bucket row, a dense parameter
			p, err := New(Config{Buckets: 256, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if err := p.CheckFinite(); err != nil {
				t.Fatalf("a new policy: %v", err)
			}
			if i < 0 {
				i = p.NumParams() - 1
			}
			p.SetParam(i, v)
			if err := p.CheckFinite(); !errors.Is(err, ErrSnapshot) {
				t.Errorf("param %d = %v: CheckFinite %v, want ErrSnapshot", i, v, err)
			}
			if _, err := p.MarshalBinary(); !errors.Is(err, ErrSnapshot) {
				t.Errorf("param %d = %v: MarshalBinary %v, want ErrSnapshot", i, v, err)
			}
		}
	}
	p, _ := New(Config{Buckets: 256, Seed: 1})
	p.SetParam(0, math.MaxFloat32)
	b, err := p.MarshalBinary()
	if err != nil {
		t.Fatalf("the largest float32: %v", err)
	}
	if _, err := Load(b); err != nil {
		t.Fatalf("the largest float32 does not load again: %v", err)
	}
}
