package shop

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/envs"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts under testdata/golden")

// goldenCase is one pinned episode: the expert on a goal, optionally after
// a scripted detour (actions taken before the expert takes over).
type goldenCase struct {
	name   string
	cfg    Config
	split  string
	index  int // position in Tasks(split, 0, 0) order
	detour func(*Env, *Episode) []string
}

// detourThroughPages opens the target, visits every item sub-page, takes
// an inadmissible action and pages the results, before the expert resumes.
func detourThroughPages(env *Env, ep *Episode) []string {
	g := ep.goal
	target := env.world.cat.products[g.target].clickAction
	return []string{
		g.searchActions[g.bestQuery], "click[not a product]", actNext, actPrev, actBackToSearch,
		g.searchActions[g.bestQuery], target, actDescription, actPrev, actFeatures, actPrev, actReviews, actBackToSearch,
	}
}

var goldenCases = []goldenCase{
	{name: "standard_eval_0", split: envs.SplitEval, index: 0},
	{name: "standard_eval_1", split: envs.SplitEval, index: 1},
	{name: "standard_eval_2", split: envs.SplitEval, index: 2},
	{name: "standard_train_first", split: envs.SplitTrain, index: 0},
	{name: "easy_eval_0", cfg: Config{Preset: PresetEasy}, split: envs.SplitEval, index: 0},
	{name: "standard_eval_3_detour", split: envs.SplitEval, index: 3, cfg: Config{MaxSteps: 30}, detour: detourThroughPages},
	{name: "standard_eval_4_step_limit", split: envs.SplitEval, index: 4, cfg: Config{MaxSteps: 9}, detour: func(_ *Env, ep *Episode) []string {
		return []string{ep.goal.searchActions[0], actNext, actPrev, actNext, actPrev, actNext, actPrev, actNext, actPrev}
	}},
}

// TestGoldenTranscripts pins the observation text, admissible lists, state
// keys and rewards of whole episodes. Regenerate with
// go test ./envs/shop -run Golden -update.
func TestGoldenTranscripts(t *testing.T) {
	for _, gc := range goldenCases {
		t.Run(gc.name, func(t *testing.T) {
			got := transcriptOf(t, gc)
			path := filepath.Join("testdata", "golden", gc.name+".txt")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("transcript differs from %s (run with -update after checking the change):\n%s", path, firstDiff(string(want), got))
			}
		})
	}
}

// transcriptOf plays a golden case and renders it.
func transcriptOf(t *testing.T, gc goldenCase) string {
	env, err := New(gc.cfg)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := env.Tasks(gc.split, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	task := tasks[gc.index]
	ep0, err := env.Reset(task)
	if err != nil {
		t.Fatal(err)
	}
	ep := ep0.(*Episode)
	var script []string
	if gc.detour != nil {
		script = gc.detour(env, ep)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "task: %s (%s), preset %s, max_steps %d\ninstruction: %s\n", task.ID, task.Type, env.cfg.Preset, env.cfg.MaxSteps, task.Instruction)
	writeState(&b, ep)
	for !ep.Done() {
		var action string
		if ep.Steps() < len(script) {
			action = script[ep.Steps()]
		} else if action, err = env.ExpertAction(ep); err != nil {
			t.Fatal(err)
		}
		res, err := ep.Step(action)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "\n> %s\n= step %d, admissible %v, reward %.4f, done %v\n", action, ep.Steps(), res.Admissible, res.Reward, res.Done)
		writeState(&b, ep)
	}
	fmt.Fprintf(&b, "\noutcome %.4f, success %v, breakdown %+v\n", ep.Outcome(), ep.Success(), ep.Breakdown())
	return b.String()
}

// writeState renders the observation, state key and admissible actions.
func writeState(b *strings.Builder, ep *Episode) {
	fmt.Fprintf(b, "--- observation (state %016x)\n%s--- admissible\n", ep.StateKey(), ep.Observation())
	for _, a := range ep.Admissible() {
		b.WriteString(a + "\n")
	}
}

// firstDiff shows the first differing line of two texts.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range min(len(w), len(g)) {
		if w[i] != g[i] {
			return fmt.Sprintf("line %d:\n got %q\nwant %q", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("lengths differ: got %d lines, want %d", len(g), len(w))
}
