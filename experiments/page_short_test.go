package experiments

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/pipeline"
)

// A suite's section names the runs that trained cycles short of their
// exploration, and says nothing of it when none did.
func TestPageNamesRunsShortOfExploration(t *testing.T) {
	res := &SuiteResult{Revisions: []string{"abc"}, Variants: []*VariantResult{
		{Label: "RSPO+GRPO", Runs: []RunResult{{Seed: 1}, {Seed: 2, Summary: pipeline.Summary{ShortCycles: []int64{0, 4}}}}},
		{Label: "GRPO", Runs: []RunResult{{Seed: 1}}},
	}}
	var b bytes.Buffer
	writeProvenance(&b, res)
	if got, want := b.String(), "Trained short of their exploration** (the learner stopped waiting for explorers or the buffer, so those cycles' updates sampled a short buffer): RSPO+GRPO seed 2 (2 of its cycles)."; !strings.Contains(got, want) {
		t.Errorf("got:\n%s\nwant it to name the short run: %q", got, want)
	}
	res.Variants[0].Runs[1].Summary.ShortCycles = nil
	b.Reset()
	writeProvenance(&b, res)
	if strings.Contains(b.String(), "short of") {
		t.Errorf("no run is short, yet:\n%s", b.String())
	}
}
