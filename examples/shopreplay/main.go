// Command shopreplay plays a trained policy on the shop's eval goals with
// the environment's expert beside it, and tells where the policy's choices
// part from the expert's and what its purchases miss. It is the diagnostic
// behind the shop paragraphs that earlier versions of docs/experiments.md
// discussed (in its git history):
//
//	go run ./examples/shopreplay --policy runs/<run>/report/policy.rspo
//
// With --policy reader it replays a scripted first-page shopper instead
// (see reader): what the results page alone can give, with or without
// reading prices (--reader-price=false).
//
// Two more reports tell why the tilted explorer does not leave a product
// that lacks a goal option: --prm FILE, how a PRM values each item-page
// action on the target, on other products and on those lacking an option;
// --trajectories FILE (rspo export --format jsonl --subject
// traj.onpolicy), how often each item-page choice of the recorded runs
// ended in a success, which is what a step-target PRM fits its values to.
package main

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/envs/shop"
	"github.com/rspo-dev/rspo/policy"
)

func main() {
	path := flag.String("policy", "", "trained policy snapshot (runs/<run>/report/policy.rspo), or reader: the scripted first-page shopper")
	greedy := flag.Bool("greedy", true, "take the most probable action")
	price := flag.Bool("reader-price", true, "with --policy reader: open only results within the price limit")
	prmPath := flag.String("prm", "", "instead of a replay: how this PRM snapshot values the actions of item pages (rspo prm train --out)")
	lambda := flag.Float64("tilt", 10, "with --prm: the explorer's tilt λ (the default recipe's --explore-tilt)")
	trajs := flag.String("trajectories", "", "instead of a replay: what recorded trajectories did on item pages (rspo export --format jsonl --subject traj.onpolicy)")
	flag.Parse()
	var err error
	switch {
	case *prmPath != "" && *trajs != "":
		err = fmt.Errorf("give --prm or --trajectories, not both")
	case *prmPath != "":
		err = prmValues(os.Stdout, *prmPath, *lambda)
	case *trajs != "":
		err = trajectorySteps(os.Stdout, *trajs)
	default:
		err = run(os.Stdout, *path, *greedy, *price)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "shopreplay:", err)
		os.Exit(1)
	}
}

// tally counts what the replay saw.
type tally struct {
	episodes, successes, bought, priceFailed int
	// actions counts the policy's actions by kind.
	actions map[string]int
	// versus counts (expert's kind, policy's kind, same action) per step.
	versus map[string]int
	// missing counts failed purchases by how many reward parts they miss,
	// causes by what they missed (a purchase may miss several).
	missing map[int]int
	causes  map[string]int
}

func run(w io.Writer, path string, greedy, readerPrice bool) error {
	agent, err := agentOf(path, greedy, readerPrice)
	if err != nil {
		return err
	}
	env, tasks, err := evalGoals()
	if err != nil {
		return err
	}
	t := tally{actions: map[string]int{}, versus: map[string]int{}, missing: map[int]int{}, causes: map[string]int{}}
	for i, task := range tasks {
		ep, err := env.Reset(task)
		if err != nil {
			return err
		}
		rng := rand.New(rand.NewPCG(uint64(i), 9))
		for !ep.Done() {
			a, err := agent.Act(ep, rng)
			if err != nil {
				return err
			}
			if ex, err := env.ExpertAction(ep); err == nil {
				key := kind(ex) + " / " + kind(a)
				if ex == a {
					key += " (same)"
				}
				t.versus[key]++
			}
			t.actions[kind(a)]++
			if _, err := ep.Step(a); err != nil {
				return err
			}
		}
		t.add(ep.(*shop.Episode))
	}
	t.print(w)
	return nil
}

// evalGoals returns the standard shop and its 500 eval goals, in order.
func evalGoals() (*shop.Env, []envs.Task, error) {
	cfg, err := shop.ParseOptions(nil)
	if err != nil {
		return nil, nil, err
	}
	env, err := shop.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	tasks, err := env.Tasks(envs.SplitEval, 0, 0)
	return env, tasks, err
}

// agentOf is the agent --policy names: the reader, or a trained snapshot.
func agentOf(path string, greedy, readerPrice bool) (envs.Agent, error) {
	switch path {
	case "":
		return nil, fmt.Errorf("--policy is required")
	case "reader":
		return reader{usePrice: readerPrice}, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, err := policy.Load(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return policy.NewAgent(p, greedy), nil
}

// add counts one finished episode.
func (t *tally) add(x *shop.Episode) {
	t.episodes++
	bd := x.Breakdown()
	if x.Success() {
		t.successes++
	}
	if bd.TypeReward > 0 {
		t.bought++
		if !bd.PriceOK {
			t.priceFailed++
		}
	}
	if bd.Total > 0 && !x.Success() {
		got := bd.Attributes + bd.Options
		if bd.PriceOK {
			got++
		}
		parts := int(float64(got)/bd.Total + 0.5) // r = got / parts for a matching type
		t.missing[parts-got]++
	}
	if bd.TypeReward > 0 && !x.Success() {
		t.countCauses(bd)
	}
}

// countCauses counts what a failed purchase missed: an option the product
// does not offer was lost when the product was chosen, an offered one not
// selected on the item page.
func (t *tally) countCauses(bd shop.RewardBreakdown) {
	if bd.OptionsOffered < bd.GoalOptions {
		t.causes["the product lacks a goal option"]++
	}
	if bd.Options < bd.OptionsOffered {
		t.causes["an offered goal option not selected"]++
	}
	if bd.Attributes < bd.GoalAttributes {
		t.causes["the product lacks a goal attribute"]++
	}
	if !bd.PriceOK {
		t.causes["over the price limit"]++
	}
}

func (t *tally) print(w io.Writer) {
	fmt.Fprintf(w, "episodes %d, successes %d, purchases of the goal's product type %d (price over the limit %d)\n",
		t.episodes, t.successes, t.bought, t.priceFailed)
	fmt.Fprintln(w, "failed purchases by reward parts missed (attributes, options, price):")
	for _, k := range slices.Sorted(maps.Keys(t.missing)) {
		fmt.Fprintf(w, "  %d missed: %d\n", k, t.missing[k])
	}
	fmt.Fprintln(w, "failed purchases by what they missed (one may miss several):")
	for _, k := range slices.Sorted(maps.Keys(t.causes)) {
		fmt.Fprintf(w, "  %-40s %d\n", k, t.causes[k])
	}
	fmt.Fprintln(w, "the policy's actions:")
	for _, k := range slices.Sorted(maps.Keys(t.actions)) {
		fmt.Fprintf(w, "  %-24s %d\n", k, t.actions[k])
	}
	fmt.Fprintln(w, "steps by the expert's action / the policy's:")
	for _, k := range slices.Sorted(maps.Keys(t.versus)) {
		fmt.Fprintf(w, "  %-44s %d\n", k, t.versus[k])
	}
}

// kind names an action's kind: search, item, option, or the button.
func kind(a string) string {
	switch {
	case strings.HasPrefix(a, "search["):
		return "search"
	case !strings.HasPrefix(a, "click["):
		return "other"
	}
	switch inner := strings.TrimSuffix(strings.TrimPrefix(a, "click["), "]"); inner {
	case "buy now", "next >", "< prev", "back to search", "description", "features", "reviews":
		return a
	default:
		if isItemID(inner) {
			return "click[item]"
		}
		return "click[option]"
	}
}

// isItemID reports whether s looks like a product id (b0smym5jgl).
func isItemID(s string) bool {
	if len(s) != 10 || s[0] != 'b' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
