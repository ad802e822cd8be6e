package swapper

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/swapper/swappertest"

	"github.com/rspo-dev/rspo/schemas"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestRelabelGolden records, step by step, what the swap does to a few
// explorer trajectories: reward before → after, the dense provenance, the
// behaviour log-prob (unchanged) and the state key, plus the priority keys.
func TestRelabelGolden(t *testing.T) {
	cases := []struct {
		name    string
		seed    int64
		actions []string
	}{
		{"success after a detour", 2, []string{"inc", "dec", "inc", "inc", "stop"}},
		{"failure", 3, []string{"inc", "stop"}},
		{"step limit with repeats", 1, []string{"inc", "dec", "inc", "dec", "inc", "dec", "inc", "dec"}},
		{"single step", 0, []string{"stop"}},
	}
	var out strings.Builder
	for _, c := range cases {
		in := swappertest.PlayCounter(t, c.seed, c.actions...)
		got, err := Relabel(in)
		if err != nil {
			t.Fatalf("%s: Relabel: %v", c.name, err)
		}
		fmt.Fprintf(&out, "== %s: outcome %g success %v → swapped %v distinct %d repeated %d\n",
			c.name, got.OutcomeReward, got.Success, got.Swapped, got.DistinctStates, got.RepeatedVisits)
		for i, s := range got.Steps {
			fmt.Fprintf(&out, "%d %-4s reward %.2f → %g  dense %.2f  logp %.4f  state %d\n",
				i, s.Action, in.Steps[i].Reward, s.Reward, s.DenseReward, s.BehaviorLogProb, s.StateKey)
		}
	}
	checkGolden(t, "relabel.golden", out.String())
}

func TestRelabelKeepsEverythingButTheLabels(t *testing.T) {
	in := swappertest.PlayCounter(t, 2, "inc", "inc", "stop")
	before := in.Clone()
	got, err := Relabel(in)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(in) != fmt.Sprint(before) {
		t.Errorf("Relabel modified its input")
	}
	want := before.Clone()
	for i := range want.Steps {
		want.Steps[i].Reward = got.Steps[i].Reward
	}
	want.Swapped, want.DistinctStates, want.RepeatedVisits = true, 3, 0
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("relabelled record does not validate: %v", err)
	}
}

func TestRelabelMovesRewardOnlyLabelsToDense(t *testing.T) {
	in := swappertest.PlayCounter(t, 2, "inc", "inc", "stop")
	for i := range in.Steps {
		in.Steps[i].DenseReward = 0
	}
	got, err := Relabel(in)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range got.Steps {
		if s.DenseReward != in.Steps[i].Reward {
			t.Errorf("step %d: dense %v, want the pre-swap label %v", i, s.DenseReward, in.Steps[i].Reward)
		}
	}
}

func TestRelabelRejects(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*schemas.Trajectory)
		want   error
	}{
		{"on-policy", func(t *schemas.Trajectory) { t.Source = schemas.SourceOnPolicy }, ErrNotExplore},
		{"already swapped", func(t *schemas.Trajectory) { t.Swapped = true }, ErrAlreadySwapped},
		{"NaN dense reward", func(t *schemas.Trajectory) { t.Steps[0].Reward = math.NaN() }, schemas.ErrInvalid},
		{"NaN outcome", func(t *schemas.Trajectory) { t.OutcomeReward = math.NaN() }, schemas.ErrInvalid},
		{"positive log-prob", func(t *schemas.Trajectory) { t.Steps[1].BehaviorLogProb = 0.5 }, schemas.ErrInvalid},
		{"no steps", func(t *schemas.Trajectory) { t.Steps = nil }, schemas.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := swappertest.PlayCounter(t, 2, "inc", "inc", "stop")
			tt.mutate(in)
			if _, err := Relabel(in); !errors.Is(err, tt.want) {
				t.Errorf("Relabel error = %v, want %v", err, tt.want)
			}
		})
	}
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update to create): %v", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run with -update if intended)\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}
