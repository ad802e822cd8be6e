package shop

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/envs"
)

// startEpisode resets eval goal i of the default configuration.
func startEpisode(t testing.TB, cfg Config, i int) (*Env, *Episode) {
	t.Helper()
	env, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := env.Tasks(envs.SplitEval, i+1, 0)
	if err != nil {
		t.Fatal(err)
	}
	ep, err := env.Reset(tasks[i])
	if err != nil {
		t.Fatal(err)
	}
	return env, ep.(*Episode)
}

// mustStep takes an admissible action.
func mustStep(t testing.TB, ep *Episode, action string) envs.StepResult {
	t.Helper()
	res, err := ep.Step(action)
	if err != nil {
		t.Fatalf("Step(%q): %v", action, err)
	}
	if !res.Admissible {
		t.Fatalf("Step(%q) was not admissible; admissible: %q", action, ep.Admissible())
	}
	return res
}

// toTarget searches with the best query and opens the target, returning
// the actions taken.
func toTarget(t testing.TB, env *Env, ep *Episode) []string {
	t.Helper()
	var path []string
	for ep.page != pageItem {
		a, err := env.ExpertAction(ep)
		if err != nil {
			t.Fatal(err)
		}
		mustStep(t, ep, a)
		path = append(path, a)
	}
	return path
}

func TestPageTransitions(t *testing.T) {
	_, ep := startEpisode(t, Config{}, 0)
	g := ep.goal
	if ep.page != pageSearch || !slices.Equal(ep.Admissible(), g.searchActions) {
		t.Fatalf("start: page %d, admissible %q; want the search page with %q", ep.page, ep.Admissible(), g.searchActions)
	}
	mustStep(t, ep, g.searchActions[0])
	wantFirst := []string{actBackToSearch, actNext}
	if got := ep.Admissible(); !slices.Equal(got[:2], wantFirst) || len(got) != 2+PageSize {
		t.Errorf("results page 1: got %q, want %q and %d items", got, wantFirst, PageSize)
	}
	mustStep(t, ep, actNext)
	if got := ep.Admissible(); !slices.Equal(got[:3], []string{actBackToSearch, actPrev, actNext}) {
		t.Errorf("results page 2: got %q", got[:3])
	}
	if !strings.Contains(ep.Observation(), "Page 2 (Total results: 50)") {
		t.Errorf("results page 2 observation: %q", ep.Observation())
	}
	mustStep(t, ep, actPrev)
	if ep.resultPage != 0 {
		t.Errorf("after < prev: results page %d, want 0", ep.resultPage)
	}
	mustStep(t, ep, ep.Admissible()[2]) // first item
	for _, sub := range []string{actDescription, actFeatures, actReviews} {
		mustStep(t, ep, sub)
		if got := ep.Admissible(); !slices.Equal(got, []string{actBackToSearch, actPrev}) {
			t.Errorf("%s: admissible %q", sub, got)
		}
		mustStep(t, ep, actPrev)
		if ep.page != pageItem {
			t.Errorf("%s then < prev: page %d, want the item", sub, ep.page)
		}
	}
	mustStep(t, ep, actPrev)
	if ep.page != pageResults || ep.item != -1 {
		t.Errorf("item then < prev: page %d item %d, want the results", ep.page, ep.item)
	}
	mustStep(t, ep, actBackToSearch)
	if !slices.Equal(ep.Admissible(), g.searchActions) {
		t.Errorf("back to search: admissible %q", ep.Admissible())
	}
}

func TestOptionsSelectAndReset(t *testing.T) {
	env, ep := startEpisode(t, Config{}, 3)
	toTarget(t, env, ep)
	p := &env.world.cat.products[ep.item]
	last := len(p.options[0]) - 1
	mustStep(t, ep, p.optionAction[0][0])
	mustStep(t, ep, p.optionAction[0][last])
	if ep.selected[0] != last {
		t.Fatalf("selected %v, want the last click (%d) to win", ep.selected, last)
	}
	if want := "[clicked button] " + p.options[0][last] + " [clicked button_]"; !strings.Contains(ep.Observation(), want) {
		t.Errorf("observation lacks %q:\n%s", want, ep.Observation())
	}
	mustStep(t, ep, actFeatures)
	mustStep(t, ep, actPrev)
	if ep.selected[0] != last {
		t.Errorf("options lost on the way to features and back: %v", ep.selected)
	}
	mustStep(t, ep, actPrev)
	mustStep(t, ep, p.clickAction)
	if ep.selected[0] != -1 {
		t.Errorf("reopening the item kept options %v, want none selected", ep.selected)
	}
}

func TestInadmissibleAction(t *testing.T) {
	_, ep := startEpisode(t, Config{}, 1)
	before, key := ep.Observation(), ep.StateKey()
	tests := []struct {
		name, action, shown string
	}{
		{"unknown", "click[nothing]", `"click[nothing]"`},
		{"padded", " " + ep.Admissible()[0], `" search[`},
		{"long", strings.Repeat("x", 500), strings.Repeat("x", 80) + `…"`},
		{"binary", "\xff\xfe", `"\xff\xfe"`},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ep.Step(tt.action)
			if err != nil {
				t.Fatal(err)
			}
			if res.Admissible || res.Done || ep.Steps() != i+1 || ep.StateKey() != key {
				t.Errorf("got admissible %v, done %v, steps %d, key changed %v; want false, false, %d, false",
					res.Admissible, res.Done, ep.Steps(), ep.StateKey() != key, i+1)
			}
			if !strings.Contains(res.Observation, tt.shown) || !strings.HasSuffix(res.Observation, before) {
				t.Errorf("observation %q: want it to show %s and repeat the page", res.Observation, tt.shown)
			}
		})
	}
}

func TestStepLimit(t *testing.T) {
	_, ep := startEpisode(t, Config{MaxSteps: 10}, 2)
	var res envs.StepResult
	for ep.Steps() < 10 {
		if ep.Done() {
			t.Fatalf("done after %d steps, want 10", ep.Steps())
		}
		res = mustStep(t, ep, ep.Admissible()[0]) // search, then back to search, …
	}
	if !res.Done || res.Reward != 0 || ep.Success() || len(ep.Admissible()) != 0 {
		t.Errorf("at the limit: done %v reward %v success %v admissible %q; want true, 0, false, none", res.Done, res.Reward, ep.Success(), ep.Admissible())
	}
	if !strings.Contains(res.Observation, "Step limit reached: 10 steps") {
		t.Errorf("observation %q does not say the step limit ended the episode", res.Observation)
	}
	if _, err := ep.Step(actBackToSearch); !errors.Is(err, envs.ErrEpisodeDone) {
		t.Errorf("Step after the end: got %v, want ErrEpisodeDone", err)
	}
}

func TestBuyEndsWithReward(t *testing.T) {
	env, ep := startEpisode(t, Config{}, 4)
	toTarget(t, env, ep)
	res := mustStep(t, ep, actBuy) // no options chosen
	b := ep.Breakdown()
	want := float64(len(ep.goal.attrs)+1) / float64(len(ep.goal.attrs)+len(ep.goal.options)+1)
	if !res.Done || res.Reward != want || ep.Success() || b.Options != 0 {
		t.Errorf("got done %v reward %v success %v breakdown %+v; want true, %v, false", res.Done, res.Reward, ep.Success(), b, want)
	}
	if !strings.Contains(res.Observation, "Options: none") || !strings.Contains(res.Observation, "Your score (min 0.0, max 1.0): ") {
		t.Errorf("purchase page: %q", res.Observation)
	}
}

// TestSuccessRewardPaysOnlyAFullMatch: under reward=success a purchase
// that misses the goal's options pays 0 (its step reward and Outcome) and
// keeps its graded Score; the expert's purchase pays 1.
func TestSuccessRewardPaysOnlyAFullMatch(t *testing.T) {
	env, ep := startEpisode(t, Config{Reward: RewardSuccess}, 4)
	toTarget(t, env, ep)
	res := mustStep(t, ep, actBuy) // no options chosen
	graded := float64(len(ep.goal.attrs)+1) / float64(len(ep.goal.attrs)+len(ep.goal.options)+1)
	if !res.Done || res.Reward != 0 || ep.Outcome() != 0 || ep.Success() {
		t.Errorf("partial purchase: done %v reward %v outcome %v success %v; want true, 0, 0, false", res.Done, res.Reward, ep.Outcome(), ep.Success())
	}
	if got := envs.Score(ep); got != graded {
		t.Errorf("partial purchase: score %v, want the graded %v", got, graded)
	}

	env, ep = startEpisode(t, Config{Reward: RewardSuccess}, 4)
	var last envs.StepResult
	for !ep.Done() {
		a, err := env.ExpertAction(ep)
		if err != nil {
			t.Fatal(err)
		}
		last = mustStep(t, ep, a)
	}
	if last.Reward != 1 || ep.Outcome() != 1 || !ep.Success() || envs.Score(ep) != 1 {
		t.Errorf("expert purchase: reward %v outcome %v success %v score %v; want 1, 1, true, 1", last.Reward, ep.Outcome(), ep.Success(), envs.Score(ep))
	}
}

// TestStateKeys: the same state reached by different paths has one key;
// different states have different keys.
func TestStateKeys(t *testing.T) {
	env, a := startEpisode(t, Config{}, 5)
	_, b := startEpisode(t, Config{}, 5)
	toTarget(t, env, a)
	toTarget(t, env, b)
	mustStep(t, b, actReviews)
	mustStep(t, b, actPrev)
	if a.StateKey() != b.StateKey() {
		t.Errorf("item page via reviews and back: key %x, want %x", b.StateKey(), a.StateKey())
	}
	item := a.StateKey()
	p := &env.world.cat.products[a.item]
	seen := map[uint64]string{item: "item"}
	for _, act := range []string{actDescription, p.optionAction[0][0], actPrev, actBackToSearch} {
		if act == p.optionAction[0][0] {
			mustStep(t, a, actPrev)
			if a.StateKey() != item {
				t.Errorf("description then < prev: key %x, want the item's %x", a.StateKey(), item)
			}
		}
		mustStep(t, a, act)
		if prev, ok := seen[a.StateKey()]; ok {
			t.Errorf("after %q: key equals the key after %q", act, prev)
		}
		seen[a.StateKey()] = act
	}
	_, other := startEpisode(t, Config{}, 6)
	if _, fresh := startEpisode(t, Config{}, 5); fresh.StateKey() == other.StateKey() {
		t.Error("the search pages of two goals share a key")
	}
}

func TestResetRejectsForeignTasks(t *testing.T) {
	env, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := env.Tasks(envs.SplitEval, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	good := tasks[0]
	easy, err := New(Config{Preset: PresetEasy})
	if err != nil {
		t.Fatal(err)
	}
	easyTasks, _ := easy.Tasks(envs.SplitEval, 1, 0)
	tests := []struct {
		name string
		edit func(*envs.Task)
	}{
		{"zero task", func(t *envs.Task) { *t = envs.Task{} }},
		{"negative seed", func(t *envs.Task) { t.Seed = -1 }},
		{"seed out of range", func(t *envs.Task) { t.Seed = 1 << 40 }},
		{"wrong split", func(t *envs.Task) { t.Split = envs.SplitTrain }},
		{"edited instruction", func(t *envs.Task) { t.Instruction += "!" }},
		{"another configuration", func(t *envs.Task) { *t = easyTasks[0] }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task := good
			tt.edit(&task)
			if _, err := env.Reset(task); !errors.Is(err, ErrTask) {
				t.Errorf("Reset(%+v): got %v, want ErrTask", task, err)
			}
		})
	}
}

// TestStateKeysRememberOpenedItems: a results page seen again after opening
// an item is a new state for the shopper (it has seen that item's options),
// whatever order the items were opened in; opening the same item again
// changes nothing.
func TestStateKeysRememberOpenedItems(t *testing.T) {
	_, a := startEpisode(t, Config{}, 3)
	mustStep(t, a, a.goal.searchActions[a.goal.bestQuery])
	results := a.StateKey()
	items := resultItems(a)
	if len(items) < 2 {
		t.Fatalf("results page lists %d items, want 2", len(items))
	}
	visit := func(ep *Episode, item string) uint64 {
		mustStep(t, ep, item)
		k := ep.StateKey()
		mustStep(t, ep, actPrev)
		return k
	}
	firstVisit := visit(a, items[0])
	if a.StateKey() == results {
		t.Error("results page after opening an item: same key as before it")
	}
	afterFirst := a.StateKey()
	if again := visit(a, items[0]); again != firstVisit || a.StateKey() != afterFirst {
		t.Error("opening the same item again: the keys changed")
	}
	visit(a, items[1])
	_, b := startEpisode(t, Config{}, 3)
	mustStep(t, b, b.goal.searchActions[b.goal.bestQuery])
	visit(b, items[1])
	visit(b, items[0])
	if a.StateKey() != b.StateKey() {
		t.Error("the same two items opened in the other order: the results page keys differ")
	}
}

// resultItems lists the click actions of the products on the current page.
func resultItems(ep *Episode) []string {
	var out []string
	for i, m := range ep.moves {
		if m.kind == moveItem {
			out = append(out, ep.acts[i])
		}
	}
	return out
}
