package learner

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestNormalize(t *testing.T) {
	tests := []struct {
		name   string
		in     []float64
		minStd float64
		want   []float64
		tol    float64
	}{
		{name: "docs/algorithm.md worked example", in: []float64{1, 0, 1, 0, 0}, want: []float64{1.22, -0.82, 1.22, -0.82, -0.82}, tol: 0.005},
		{name: "all fail", in: []float64{0, 0, 0, 0}, want: []float64{0, 0, 0, 0}},
		{name: "all success", in: []float64{1, 1, 1}, want: []float64{0, 0, 0}},
		{name: "all equal non-round", in: []float64{0.1, 0.1, 0.1}, want: []float64{0, 0, 0}},
		{name: "single", in: []float64{0.7}, want: []float64{0}},
		{name: "empty", in: nil, want: []float64{}},
		{name: "tiny dense returns below min std", in: []float64{0.001, 0.002, 0.0015}, minStd: 0.01, want: []float64{0, 0, 0}},
		{name: "tiny dense returns without min std", in: []float64{0.001, 0.003}, want: []float64{-1, 1}, tol: 0.001},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, _ := Normalize(tt.in, tt.minStd, 1e-6)
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if math.IsNaN(got[i]) || !near(got[i], tt.want[i], tt.tol) {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
				if tt.tol == 0 && got[i] != tt.want[i] {
					t.Fatalf("got %v, want exactly %v", got, tt.want)
				}
			}
		})
	}
}

func TestGAE(t *testing.T) {
	tests := []struct {
		name          string
		rewards, vals []float64
		gamma, lambda float64
		adv, targets  []float64
	}{
		{name: "outcome only, zero values, λ=1", rewards: []float64{0, 0, 1}, vals: []float64{0, 0, 0}, gamma: 1, lambda: 1,
			adv: []float64{1, 1, 1}, targets: []float64{1, 1, 1}},
		{name: "λ=0 is one-step TD", rewards: []float64{0, 1}, vals: []float64{0.5, 0.25}, gamma: 0.9, lambda: 0,
			adv: []float64{0.9*0.25 - 0.5, 1 - 0.25}, targets: []float64{0.9 * 0.25, 1}},
		{name: "discounted", rewards: []float64{0, 0, 1}, vals: []float64{0, 0, 0}, gamma: 0.5, lambda: 1,
			adv: []float64{0.25, 0.5, 1}, targets: []float64{0.25, 0.5, 1}},
		{name: "perfect critic gives zero advantage", rewards: []float64{0, 1}, vals: []float64{1, 1}, gamma: 1, lambda: 0.95,
			adv: []float64{0, 0}, targets: []float64{1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			adv, tg := GAE(tt.rewards, tt.vals, tt.gamma, tt.lambda)
			for i := range adv {
				if !near(adv[i], tt.adv[i], 1e-12) || !near(tg[i], tt.targets[i], 1e-12) {
					t.Fatalf("got adv %v targets %v, want %v %v", adv, tg, tt.adv, tt.targets)
				}
			}
		})
	}
}

func TestDiscountedReturns(t *testing.T) {
	got := DiscountedReturns([]float64{1, 0, 2}, 0.5)
	want := []float64{1.5, 1, 2}
	for i := range got {
		if !near(got[i], want[i], 1e-12) {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}
