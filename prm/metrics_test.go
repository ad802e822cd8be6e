package prm

import (
	"math"
	"testing"
)

func TestAUC(t *testing.T) {
	tests := []struct {
		name     string
		scores   []float64
		positive []bool
		want     float64
	}{
		{"perfect", []float64{0.1, 0.2, 0.8, 0.9}, []bool{false, false, true, true}, 1},
		{"inverted", []float64{0.9, 0.8, 0.2, 0.1}, []bool{false, false, true, true}, 0},
		// pairs (pos,neg): (0.5,0.1)>, (0.5,0.7)<, (0.9,0.1)>, (0.9,0.7)> → 3/4
		{"three of four pairs", []float64{0.1, 0.5, 0.7, 0.9}, []bool{false, true, false, true}, 0.75},
		// pairs: (0.5,0.5) tie = ½, (0.5,0.2) > → 1.5/2
		{"tie counts half", []float64{0.5, 0.5, 0.2}, []bool{true, false, false}, 0.75},
		{"all equal", []float64{1, 1, 1, 1}, []bool{true, false, true, false}, 0.5},
		{"one class only", []float64{0.1, 0.9}, []bool{false, false}, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := AUC(tt.scores, tt.positive); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSpearman(t *testing.T) {
	tests := []struct {
		name string
		x, y []float64
		want float64
	}{
		{"monotone", []float64{1, 2, 3, 4}, []float64{10, 20, 30, 1000}, 1},
		{"reversed", []float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}, -1},
		// ranks x = 1..5, y ranks = 2,1,4,3,5: d² = 1+1+1+1+0 = 4 → 1 − 6·4/(5·24) = 0.8
		{"hand computed", []float64{1, 2, 3, 4, 5}, []float64{2, 1, 4, 3, 5}, 0.8},
		// x ranks 1,2,3,4; y ranks 1.5,1.5,3.5,3.5 → Pearson = 0.894427…
		{"ties in y", []float64{1, 2, 3, 4}, []float64{0, 0, 1, 1}, 2 / math.Sqrt(5)},
		{"constant", []float64{1, 2, 3}, []float64{7, 7, 7}, 0},
		{"too short", []float64{1}, []float64{1}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Spearman(tt.x, tt.y); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMSE(t *testing.T) {
	if got := MSE([]float64{1, 2, 3}, []float64{1, 0, 4}); got != 5.0/3 {
		t.Errorf("got %v, want %v", got, 5.0/3)
	}
	if got := MSE(nil, nil); got != 0 {
		t.Errorf("empty: got %v, want 0", got)
	}
}

func TestGate(t *testing.T) {
	trained := func(auc float64, heldSucc, held int) *Model {
		m := Random(1)
		m.Info = ModelInfo{Trained: true, HeldoutAUC: auc, HeldoutSuccesses: heldSucc, Heldout: held}
		return m
	}
	tests := []struct {
		name      string
		m         *Model
		threshold float64
		want      bool
	}{
		{"gate off shapes with the random control", Random(1), 0, true},
		{"random control is not informative", Random(1), 0.6, false},
		{"informative model passes", trained(0.8, 5, 50), 0.6, true},
		{"at the threshold passes", trained(0.6, 5, 50), 0.6, true},
		{"flat model is gated", trained(0.52, 5, 50), 0.6, false},
		{"no held-out success means no evidence", trained(0.5, 0, 50), 0.4, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.m.ShapingEnabled(tt.threshold); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
