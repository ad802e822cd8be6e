package envs

import (
	"math"
	"testing"
)

func TestBoundsCheckOutcome(t *testing.T) {
	graded := Bounds{Reward: Range{0, 1}, Score: Range{0, 1}, SuccessPaysMax: true}
	binary := Bounds{Reward: Range{0, 1}, Score: Range{0, 1}, TwoValued: true, SuccessPaysMax: true}
	tests := []struct {
		name    string
		b       Bounds
		outcome float64
		success bool
		ok      bool
	}{
		{"graded partial failure", graded, 0.4, false, true},
		{"graded success", graded, 1, true, true},
		{"graded success below the max", graded, 0.9, true, false},
		{"graded full score claimed a failure", graded, 1, false, false},
		{"above the range", graded, 1e308, true, false},
		{"below the range", graded, -0.5, false, false},
		{"NaN", graded, math.NaN(), false, false},
		{"binary failure", binary, 0, false, true},
		{"binary success", binary, 1, true, true},
		{"binary partial", binary, 0.5, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.b.CheckOutcome(tt.outcome, tt.success)
			if (err == nil) != tt.ok {
				t.Errorf("CheckOutcome(%v, %v) = %v, want ok %v", tt.outcome, tt.success, err, tt.ok)
			}
		})
	}
}

func TestBoundsValidate(t *testing.T) {
	for _, b := range []Bounds{
		{Reward: Range{0, 2}, Score: Range{0, 1}},
		{Reward: Range{0, 1}, Score: Range{1, 0}},
		{Reward: Range{math.NaN(), 1}, Score: Range{0, 1}},
		{Reward: Range{-1, 1}, Score: Range{0, 1}},
	} {
		if b.Validate() == nil {
			t.Errorf("%+v validated", b)
		}
	}
	if err := (Bounds{Reward: Range{0, 1}, Score: Range{0, 1}}).Validate(); err != nil {
		t.Error(err)
	}
}
