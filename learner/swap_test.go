package learner

import (
	"errors"
	"math"
	"testing"

	"github.com/rspo-dev/rspo/schemas"
)

// swapBatch prepares a batch of two successes and two failures of one
// task, and two failures of another, with advantages assigned.
func swapBatch(t *testing.T, cfg Config) (*Trainer, []*sample) {
	t.Helper()
	on := []*schemas.Trajectory{
		fakeTrajectory("a", "t1", "g1", true, 2), fakeTrajectory("b", "t1", "g1", false, 2),
		fakeTrajectory("c", "t1", "g1", true, 2), fakeTrajectory("d", "t1", "g1", false, 2),
		fakeTrajectory("e", "t2", "g2", false, 3), fakeTrajectory("f", "t2", "g2", true, 3),
	}
	tr := newTrainer(t, smallPolicy(t, 1), cfg)
	samples, err := tr.prepare(on, nil)
	if err != nil {
		t.Fatal(err)
	}
	groups := groupSamples(samples)
	tr.oldPass(samples)
	tr.assignAdvantages(samples, groups)
	return tr, samples
}

func swapTotal(samples []*sample) (sum float64, nonzero int) {
	for _, s := range samples {
		for _, c := range s.swap {
			sum += c
			if c != 0 {
				nonzero++
			}
		}
	}
	return sum, nonzero
}

func TestSwapOffByDefault(t *testing.T) {
	tr, samples := swapBatch(t, Config{})
	if pairs := tr.assignSwap(samples); pairs != 0 {
		t.Fatalf("got %d pairs, want 0", pairs)
	}
	if _, n := swapTotal(samples); n != 0 {
		t.Fatalf("got %d non-zero coefficients, want 0", n)
	}
}

func TestSwapPartners(t *testing.T) {
	tests := []struct {
		name      string
		cfg       SwapConfig
		wantPairs int
	}{
		// 14 steps, all with non-zero advantage, K partners each.
		{name: "random K=1", cfg: SwapConfig{Weight: 1}, wantPairs: 14},
		{name: "random K=3", cfg: SwapConfig{Weight: 1, K: 3}, wantPairs: 42},
		{name: "bucket K=2", cfg: SwapConfig{Weight: 1, K: 2, Partners: PartnersBucket}, wantPairs: 28},
		{name: "knn K=2", cfg: SwapConfig{Weight: 1, K: 2, Partners: PartnersKNN, Candidates: 64}, wantPairs: 28},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, samples := swapBatch(t, Config{Swap: tt.cfg})
			if pairs := tr.assignSwap(samples); pairs != tt.wantPairs {
				t.Fatalf("got %d pairs, want %d", pairs, tt.wantPairs)
			}
			// Every partner weight sums to one per step, so Σ_j c_j = λ·β·Σ_i A_i.
			sumAdv := 0.0
			for _, s := range samples {
				for _, a := range s.adv {
					sumAdv += a
				}
			}
			if sum, _ := swapTotal(samples); math.Abs(sum-sumAdv) > 1e-9 {
				t.Fatalf("got Σ c_j = %v, want Σ A_i = %v", sum, sumAdv)
			}
		})
	}
}

// TestSwapBucketStaysInBucket: with reward buckets, a success's advantage
// only reaches steps of other successes.
func TestSwapBucketStaysInBucket(t *testing.T) {
	tr, samples := swapBatch(t, Config{Swap: SwapConfig{Weight: 1, K: 2, Partners: PartnersBucket}})
	tr.assignSwap(samples)
	for _, s := range samples {
		for _, c := range s.swap {
			if s.t.Success && c < 0 || !s.t.Success && c > 0 {
				t.Fatalf("%s (success %v) got coefficient %v from the other bucket", s.t.ID, s.t.Success, c)
			}
		}
	}
}

func TestSwapRamp(t *testing.T) {
	tr, _ := swapBatch(t, Config{Swap: SwapConfig{Weight: 0.8, RampUpdates: 4}})
	for u, want := range []float64{0.2, 0.4, 0.6, 0.8, 0.8} {
		tr.updates = int64(u)
		if got := tr.swapWeight(); math.Abs(got-want) > 1e-12 {
			t.Fatalf("update %d: got λ %v, want %v", u, got, want)
		}
	}
}

func TestSwapConfigValidate(t *testing.T) {
	for _, cfg := range []SwapConfig{{Weight: -1}, {K: 100}, {Partners: "nearest"}, {Prob: 2}, {RampUpdates: -1}} {
		var ce *ConfigError
		if err := (Config{Swap: cfg}).Validate(); !errors.As(err, &ce) {
			t.Errorf("%+v: got %v, want a ConfigError", cfg, err)
		}
	}
}
