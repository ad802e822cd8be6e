package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/envs/shop"
	"github.com/rspo-dev/rspo/prm"
)

// Item pages by what their product is to the goal.
const (
	pageTarget = iota // the goal's target product
	pageOffers        // another product that offers every goal option
	pageLacks         // a product that lacks a goal option
	numPageKinds
)

var pageKindNames = [numPageKinds]string{"the target", "offers every goal option", "lacks a goal option"}

// itemActions are the item page's buttons whose values --prm reports; the
// option clicks are reported as their best one.
var itemActions = [...]string{"click[buy now]", "click[< prev]", "click[back to search]"}

// bestOption is the index in valueTally.sums of the best option click.
const bestOption = len(itemActions)

// valueTally sums a PRM's action values over item pages of one kind.
type valueTally struct {
	pages int
	// sums of r̂ per itemActions entry, then (at bestOption) of the best
	// option click.
	sums [bestOption + 1]float64
	// prevFirst counts pages where r̂(< prev) is the highest of all
	// admissible actions; prevShare sums < prev's probability under a
	// uniform policy tilted by exp(λ·r̂), the explorer's choice without a
	// policy's preferences.
	prevFirst int
	prevShare float64
}

// prmValues reports how the PRM at path values the item page's actions:
// for each of the 500 eval goals it searches with the expert's query,
// opens every product on the first results page and scores that page's
// admissible actions. The tilted explorer picks an action with weight
// π_θ(a)·exp(λ·r̂(s, a)), so a product that lacks a goal option is left
// only if r̂(< prev) stands out there.
func prmValues(w io.Writer, path string, lambda float64) error {
	m, err := prm.LoadFile(path)
	if err != nil {
		return err
	}
	env, tasks, err := evalGoals()
	if err != nil {
		return err
	}
	var tallies [numPageKinds]valueTally
	for _, task := range tasks {
		if err := scoreItemPages(env, m, task, lambda, &tallies); err != nil {
			return fmt.Errorf("%s: %w", task.ID, err)
		}
	}
	printValues(w, tallies, lambda)
	return nil
}

// scoreItemPages opens every product of the task's first results page
// (searched with the expert's query) and adds its item page to tallies.
func scoreItemPages(env *shop.Env, m *prm.Model, task envs.Task, lambda float64, tallies *[numPageKinds]valueTally) error {
	ep, err := play(env, task)
	if err != nil {
		return err
	}
	query, err := env.ExpertAction(ep)
	if err != nil {
		return err
	}
	if _, err := ep.Step(query); err != nil {
		return err
	}
	var items []string
	for _, a := range ep.Admissible() {
		if kind(a) == "click[item]" {
			items = append(items, a)
		}
	}
	scores := make([]float64, 0, 16)
	for _, item := range items {
		ep, err := play(env, task, query, item)
		if err != nil {
			return err
		}
		acts := ep.Admissible()
		scores = scores[:len(acts)]
		// A PRM whose featurizer is an embedding model behind a server
		// may fail; the report must not average NaN scores.
		if err := m.ScoreActionsContext(context.Background(), task.Instruction, ep.Observation(), acts, scores); err != nil {
			return err
		}
		k, err := pageKind(env, ep)
		if err != nil {
			return err
		}
		tallies[k].add(acts, scores, lambda)
	}
	return nil
}

// play starts task and takes actions in order.
func play(env *shop.Env, task envs.Task, actions ...string) (envs.Episode, error) {
	ep, err := env.Reset(task)
	if err != nil {
		return nil, err
	}
	for _, a := range actions {
		if _, err := ep.Step(a); err != nil {
			return nil, err
		}
	}
	return ep, nil
}

// pageKind tells what the open item is to the goal: the expert leaves
// every product but the target, and buying it at once tells which goal
// options it offers. It ends ep.
func pageKind(env *shop.Env, ep envs.Episode) (int, error) {
	ex, err := env.ExpertAction(ep)
	if err != nil {
		return 0, err
	}
	if _, err := ep.Step("click[buy now]"); err != nil {
		return 0, err
	}
	bd := ep.(*shop.Episode).Breakdown()
	switch {
	case ex != "click[< prev]":
		return pageTarget, nil
	case bd.OptionsOffered < bd.GoalOptions:
		return pageLacks, nil
	}
	return pageOffers, nil
}

// add counts one item page whose admissible actions acts scored scores.
func (v *valueTally) add(acts []string, scores []float64, lambda float64) {
	v.pages++
	best, bestOpt, prev := math.Inf(-1), math.Inf(-1), math.NaN()
	for i, a := range acts {
		s := scores[i]
		best = max(best, s)
		if j := slices.Index(itemActions[:], a); j >= 0 {
			v.sums[j] += s
		}
		if a == "click[< prev]" {
			prev = s
		}
		if kind(a) == "click[option]" {
			bestOpt = max(bestOpt, s)
		}
	}
	if !math.IsInf(bestOpt, -1) {
		v.sums[bestOption] += bestOpt
	}
	if prev == best {
		v.prevFirst++
	}
	total := 0.0
	for _, s := range scores {
		total += math.Exp(lambda * (s - best))
	}
	v.prevShare += math.Exp(lambda*(prev-best)) / total
}

func printValues(w io.Writer, tallies [numPageKinds]valueTally, lambda float64) {
	fmt.Fprintf(w, "item pages opened from the expert's first results page, by what the product is to the goal; mean r̂ of each action:\n")
	fmt.Fprintf(w, "  %-26s %6s %8s %8s %8s %8s %12s %14s\n", "page", "pages", "buy now", "< prev", "back", "option*", "prev first", fmt.Sprintf("prev at λ=%g", lambda))
	for k, v := range tallies {
		n := float64(max(v.pages, 1))
		fmt.Fprintf(w, "  %-26s %6d %8.3f %8.3f %8.3f %8.3f %12.2f %14.3f\n", pageKindNames[k], v.pages,
			v.sums[0]/n, v.sums[1]/n, v.sums[2]/n, v.sums[bestOption]/n, float64(v.prevFirst)/n, v.prevShare/n)
	}
	fmt.Fprintln(w, "  (option*: the best-valued option click; prev first: share of pages where < prev has the highest r̂;")
	fmt.Fprintln(w, "   prev at λ: < prev's probability when a uniform policy is tilted by exp(λ·r̂))")
}
