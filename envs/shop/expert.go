package shop

import (
	"fmt"

	"github.com/rspo-dev/rspo/envs"
)

// ExpertAction returns the next action of the expert, which sees the goal's
// target: search with the query that lists the target earliest, page to
// it, open it, select each requested option value and buy. From any state
// it heads back towards that path. Errors: ErrForeignEpisode for an
// episode of another environment, envs.ErrEpisodeDone once it has ended.
func (e *Env) ExpertAction(ep envs.Episode) (string, error) {
	x, ok := ep.(*Episode)
	if !ok || x.env.world != e.world {
		return "", fmt.Errorf("%w: %T", ErrForeignEpisode, ep)
	}
	if x.done {
		return "", fmt.Errorf("%w: %s", envs.ErrEpisodeDone, x.task.ID)
	}
	return x.expertAction(), nil
}

// expertAction plans one step from the current state.
func (x *Episode) expertAction() string {
	g := x.goal
	switch x.page {
	case pageSearch:
		return g.searchActions[g.bestQuery]
	case pageResults:
		return x.expertOnResults()
	case pageItem:
		return x.expertOnItem()
	}
	return actPrev // description, features, reviews
}

// expertOnResults pages towards the target, or goes back to search when
// this query does not list it.
func (x *Episode) expertOnResults() string {
	rank := -1
	for i, d := range x.goal.results[x.query] {
		if int(d) == x.goal.target {
			rank = i
			break
		}
	}
	switch p := rank / PageSize; {
	case rank < 0:
		return actBackToSearch
	case p > x.resultPage:
		return actNext
	case p < x.resultPage:
		return actPrev
	}
	return x.env.world.cat.products[x.goal.target].clickAction
}

// expertOnItem selects the requested options of the target and buys it.
func (x *Episode) expertOnItem() string {
	if x.item != x.goal.target {
		return actPrev
	}
	p := &x.env.world.cat.products[x.item]
	for _, o := range x.goal.options {
		i := indexOf(p.options[o.dim], o.value)
		if x.selected[o.dim] != i {
			return p.optionAction[o.dim][i]
		}
	}
	return actBuy
}

// indexOf returns the position of s in list, or -1.
func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}
