package experiments

import (
	"math"
	"testing"

	"github.com/rspo-dev/rspo/pipeline"
)

// TestEqualStepsChargeTheSourceRuns: a recipe run whose PRM was trained on
// source runs is read at equal environment steps with those runs' steps
// before its own, so at a base run's budget smaller than the source runs
// alone it has no figure yet, and its curve ends at its own steps plus
// theirs.
func TestEqualStepsChargeTheSourceRuns(t *testing.T) {
	curve := []Point{{Update: 1, EnvSteps: 100, Value: 0.1}, {Update: 2, EnvSteps: 200, Value: 0.5}}
	recipe := RunResult{Summary: pipeline.Summary{EnvStepsSource: 1000}, Series: map[string][]Point{"eval::success_rate": curve}}
	base := RunResult{Series: map[string][]Point{"eval::success_rate": curve}}

	withSources := VariantResult{Runs: []RunResult{recipe}}
	if got := withSources.minFinalSteps(); got != 1200 {
		t.Errorf("recipe run's last evaluation at %v steps, want 1200 (its 200 and the source runs' 1000)", got)
	}
	if got := withSources.SuccessAt(150); !math.IsNaN(got.Mean) || got.N != 0 {
		t.Errorf("recipe run at 150 steps: %+v, want no figure (its source runs alone took 1000)", got)
	}
	if got := withSources.SuccessAt(1150); math.Abs(got.Mean-0.3) > 1e-12 {
		t.Errorf("recipe run at 1150 steps: %v, want 0.3 (halfway between its first two evaluations)", got.Mean)
	}
	without := VariantResult{Runs: []RunResult{base}}
	if got := without.SuccessAt(150); math.Abs(got.Mean-0.3) > 1e-12 {
		t.Errorf("run without sources at 150 steps: %v, want 0.3", got.Mean)
	}
	if recipe.Series["eval::success_rate"][0].EnvSteps != 100 {
		t.Error("stepCurve changed the stored series; it must keep the run's own steps")
	}
}
