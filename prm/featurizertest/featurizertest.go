// Package featurizertest is the conformance suite every prm.Featurizer
// runs: deterministic features that overwrite their destination, safe for
// concurrent use, rebuilt identically from their spec, and — for a
// prm.BatchFeaturizer — a batch call that equals step-by-step calls.
package featurizertest

import (
	"context"
	"math"
	"sync"
	"testing"

	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/prm/prmtest"
)

// Steps returns the steps the suite featurizes: those of a few synthetic
// trajectories, one repeated, plus an empty step.
func Steps() []prm.StepText {
	trajs, _ := prmtest.Decisive("conformance", 1, 4, 5)
	var steps []prm.StepText
	for _, t := range trajs {
		for _, s := range t.Steps {
			steps = append(steps, prm.StepText{Instruction: t.Instruction, Observation: s.Observation, Action: s.Action})
		}
	}
	return append(steps, steps[0], prm.StepText{})
}

// Run checks feat against the Featurizer contract.
func Run(t *testing.T, feat prm.Featurizer) {
	t.Helper()
	d := feat.Dim()
	if d < 1 || d > prm.MaxFeatureDim {
		t.Fatalf("Dim %d not in 1..%d", d, prm.MaxFeatureDim)
	}
	steps := Steps()
	want := features(feat, steps, 0)
	t.Run("deterministic and overwrites dst", func(t *testing.T) {
		got := features(feat, steps, 7)
		equal(t, "second call over a dirty dst", got, want)
		for i, x := range want {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("entry %d of the features is %v", i, x)
			}
		}
	})
	t.Run("actions are told apart", func(t *testing.T) {
		a, b := steps[0], steps[0]
		b.Action += " now"
		fa, fb := features(feat, []prm.StepText{a}, 0), features(feat, []prm.StepText{b}, 0)
		same := true
		for i := range fa {
			same = same && fa[i] == fb[i]
		}
		if same {
			t.Errorf("actions %q and %q have the same features", a.Action, b.Action)
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		got := make([][]float32, 6)
		for g := range got {
			wg.Go(func() { got[g] = features(feat, steps, float32(g)) })
		}
		wg.Wait()
		for _, g := range got {
			equal(t, "a concurrent call", g, want)
		}
	})
	if sf, ok := feat.(prm.SpecFeaturizer); ok {
		t.Run("rebuilt from its spec", func(t *testing.T) {
			again, err := prm.NewFeaturizer(sf.Spec())
			if err != nil {
				t.Fatal(err)
			}
			if again.Dim() != d {
				t.Fatalf("rebuilt Dim %d, want %d", again.Dim(), d)
			}
			equal(t, "the rebuilt featurizer", features(again, steps, 0), want)
		})
	}
	if bf, ok := feat.(prm.BatchFeaturizer); ok {
		t.Run("batch equals step by step", func(t *testing.T) {
			got := make([]float32, len(steps)*d)
			for i := range got {
				got[i] = 3
			}
			if err := bf.FeaturesBatch(context.Background(), steps, got); err != nil {
				t.Fatal(err)
			}
			equal(t, "FeaturesBatch", got, want)
			if err := bf.FeaturesBatch(context.Background(), nil, nil); err != nil {
				t.Errorf("an empty batch: %v", err)
			}
		})
	}
	t.Run("a model over it", func(t *testing.T) {
		m, err := prm.New(feat, prm.ModelConfig{Hidden: 4, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		trajs, _ := prmtest.Decisive("conformance", 2, 3, 4)
		got, err := m.ScoreBatchContext(context.Background(), trajs)
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range m.ScoreBatch(trajs) {
			for k := range w {
				if got[i][k] != w[k] || math.IsNaN(w[k]) {
					t.Fatalf("trajectory %d step %d: ScoreBatchContext %v, ScoreBatch %v", i, k, got[i][k], w[k])
				}
			}
		}
	})
}

// features calls Features step by step over a dst filled with dirt.
func features(feat prm.Featurizer, steps []prm.StepText, dirt float32) []float32 {
	d := feat.Dim()
	out := make([]float32, len(steps)*d)
	for i := range out {
		out[i] = dirt
	}
	for i, s := range steps {
		feat.Features(s.Instruction, s.Observation, s.Action, out[i*d:(i+1)*d])
	}
	return out
}

func equal(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: entry %d is %v, want %v", what, i, got[i], want[i])
		}
	}
}
