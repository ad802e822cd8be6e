package pipeline

import (
	"slices"
	"strings"
	"testing"
)

// The headline has a column per split's success (and score, where the
// environment grades one), not the eval_ aliases of the first split, and
// the base run's row only when there is one.
func TestHeadlineColumnsAndRows(t *testing.T) {
	household := Summary{Algo: "grpo", RSPO: true, Explore: "prm", Env: "household", Updates: 30, Seed: 1,
		Config:   &Options{EnvOptions: map[string]string{"preset": "medium", "max_steps": "30"}},
		Final:    map[string]float64{"eval_in_distribution_success_rate": 0.72, "eval_out_of_distribution_success_rate": 0.55, "eval_success_rate": 0.72},
		EnvSteps: 196020, EnvStepsSource: 884313, WallSeconds: 227.8, PeakRSSBytes: 1649 << 20}
	h := headline(household)
	want := []string{"success, in distribution", "success, out of distribution", "environment steps", "wall time", "peak memory"}
	if !slices.Equal(h.Columns, want) || len(h.Rows) != 1 {
		t.Fatalf("household: columns %q, %d rows", h.Columns, len(h.Rows))
	}
	if got := h.Rows[0].Cells; !slices.Equal(got, []string{"0.72", "0.55", "196 k steps", "3 min 48 s", "1.6 GiB"}) {
		t.Errorf("household row %q", got)
	}
	if !strings.HasPrefix(h.Lead, "RSPO (explorer prm) with GRPO on household (max_steps=30 preset=medium), 30 updates, seed 1.") || !strings.Contains(h.Lead, "884 k steps more (1.08 M steps in all)") {
		t.Errorf("lead %q", h.Lead)
	}
	shop := Summary{Algo: "gigpo", Env: "shop", Final: map[string]float64{"eval_success_rate": 0.4, "eval_score": 0.61},
		Base: &BaseRun{Run: "shop-base", Algo: "gigpo", Final: map[string]float64{"eval_success_rate": 0.3}}}
	h = headline(shop)
	if !slices.Equal(h.Columns[:2], []string{"success, held out", "score, held out"}) || len(h.Rows) != 2 {
		t.Fatalf("shop: columns %q, %d rows", h.Columns, len(h.Rows))
	}
	if r := h.Rows[1]; r.Name != "GIGPO alone (shop-base)" || r.Cells[0] != "0.30" || r.Cells[1] != "" {
		t.Errorf("base row %+v", r)
	}
}
