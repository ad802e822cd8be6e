package swapper

import (
	"errors"
	"testing"

	"github.com/rspo-dev/rspo/swapper/swappertest"

	"github.com/rspo-dev/rspo/schemas"
)

func TestVerifyAcceptsHonestTrajectories(t *testing.T) {
	tests := []struct {
		name    string
		seed    int64
		actions []string
	}{
		{"success", 2, []string{"inc", "inc", "stop"}},
		{"failure", 2, []string{"inc", "stop"}},
		{"step limit", 0, []string{"inc", "dec", "inc", "dec", "inc", "dec", "inc", "dec"}},
		{"not finished", 4, []string{"inc", "inc"}},
	}
	v := NewVerifier(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := v.Verify(swappertest.PlayCounter(t, tt.seed, tt.actions...)); err != nil {
				t.Errorf("Verify = %v, want nil", err)
			}
		})
	}
}

func TestVerifyRejectsForgeries(t *testing.T) {
	tests := []struct {
		name   string
		forge  func(*schemas.Trajectory)
		claim  string
		target error
	}{
		{"fake success", func(t *schemas.Trajectory) { t.Success, t.OutcomeReward = true, 1 }, "outcome_reward", ErrForged},
		{"fake success flag", func(t *schemas.Trajectory) { t.Success = true }, "success", ErrForged},
		{"inflated state keys", func(t *schemas.Trajectory) { t.Steps[1].StateKey = 999 }, "state_key", ErrForged},
		{"action swapped", func(t *schemas.Trajectory) { t.Steps[0].Action = "dec" }, "state_key", ErrForged},
		{"steps after the end", func(t *schemas.Trajectory) {
			t.Steps = append(t.Steps, t.Steps[len(t.Steps)-1])
		}, "steps", ErrForged},
		{"unknown environment", func(t *schemas.Trajectory) { t.Env = "no-such-env" }, "", ErrUnverifiable},
		{"task the env refuses", func(t *schemas.Trajectory) { t.Split = "nope" }, "", ErrUnverifiable},
	}
	v := NewVerifier(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := swappertest.PlayCounter(t, 3, "inc", "inc", "stop") // target 3: a failure
			tt.forge(tr)
			err := v.Verify(tr)
			if !errors.Is(err, tt.target) {
				t.Fatalf("Verify = %v, want %v", err, tt.target)
			}
			var fe *ForgeryError
			if tt.claim != "" && (!errors.As(err, &fe) || fe.Claim != tt.claim) {
				t.Errorf("disproved claim = %+v, want %q", fe, tt.claim)
			}
		})
	}
}
