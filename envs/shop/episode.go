package shop

import (
	"fmt"

	"github.com/rspo-dev/rspo/envs"
)

// page is the kind of page the agent is on.
type page uint8

const (
	pageSearch page = iota
	pageResults
	pageItem
	pageDescription
	pageFeatures
	pageReviews
	pageDone
)

// Episode is one shopping episode. It is not safe for concurrent use.
type Episode struct {
	env  *Env
	task envs.Task
	goal *goal

	page       page
	query      int    // index into goal.queries; -1 on the search page
	resultPage int    // 0-based results page
	item       int    // product index; -1 off item pages
	selected   []int  // per option dimension of the item: value index or -1
	opened     uint64 // order-free hash of the set of items opened so far (openedHash)
	openedList []int  // those items, to add each only once
	steps      int
	done       bool
	bought     bool
	breakdown  RewardBreakdown

	pageText string   // the current page without any message
	obs      string   // the last observation
	acts     []string // admissible actions, parallel to moves
	moves    []move
	buf      []byte // rendering buffer, reused
}

var (
	_ envs.Episode = (*Episode)(nil)
	_ envs.Scorer  = (*Episode)(nil)
)

// newEpisode starts an episode on the search page.
func newEpisode(env *Env, task envs.Task, g *goal) *Episode {
	x := &Episode{env: env, task: task, goal: g, query: -1, item: -1, selected: make([]int, 0, 2)}
	x.render()
	x.obs = x.pageText
	return x
}

// Task returns the episode's task.
func (x *Episode) Task() envs.Task { return x.task }

// Observation returns the text of the last step (or the search page).
func (x *Episode) Observation() string { return x.obs }

// Admissible returns the valid actions; the slice is reused by Step.
func (x *Episode) Admissible() []string { return x.acts }

// Done reports whether the episode ended by a purchase or the step limit.
func (x *Episode) Done() bool { return x.done }

// Steps returns the number of actions taken, admissible or not.
func (x *Episode) Steps() int { return x.steps }

// Outcome returns the outcome reward of the configuration's Reward: the
// purchase's score (RewardScore) or 1 for a success and 0 otherwise
// (RewardSuccess); 0 without a purchase.
func (x *Episode) Outcome() float64 {
	if x.env.cfg.Reward == RewardSuccess {
		if x.Success() {
			return 1
		}
		return 0
	}
	return x.breakdown.Total
}

// Score implements envs.Scorer: the purchase's graded WebShop score
// whatever the configuration's Reward, 0 without a purchase.
func (x *Episode) Score() float64 { return x.breakdown.Total }

// Success reports whether the purchase earned reward 1.
func (x *Episode) Success() bool { return x.bought && x.breakdown.Success() }

// Breakdown returns the parts of the reward; the zero value until a
// purchase.
func (x *Episode) Breakdown() RewardBreakdown { return x.breakdown }

// Step applies action, which must be one of Admissible() exactly (no
// trimming or case folding). Any other string is a wasted step: the state
// stays, the observation says so and repeats the page. After MaxSteps
// steps without a purchase the episode ends with reward 0. Stepping a
// finished episode returns envs.ErrEpisodeDone.
func (x *Episode) Step(action string) (envs.StepResult, error) {
	if x.done {
		return envs.StepResult{}, fmt.Errorf("%w: %s after %d steps", envs.ErrEpisodeDone, x.task.ID, x.steps)
	}
	x.steps++
	i := x.find(action)
	if i >= 0 {
		x.apply(x.moves[i])
		x.render()
		x.obs = x.pageText
	} else {
		x.obs = inadmissibleText(action, len(x.acts)) + x.pageText
	}
	if !x.done && x.steps >= x.env.cfg.MaxSteps {
		x.endByLimit()
	}
	res := envs.StepResult{Observation: x.obs, Done: x.done, Admissible: i >= 0}
	if x.done {
		res.Reward = x.Outcome()
	}
	return res, nil
}

// find returns the index of action in the admissible list, or -1.
func (x *Episode) find(action string) int {
	for i, a := range x.acts {
		if a == action {
			return i
		}
	}
	return -1
}

// endByLimit ends the episode without a purchase.
func (x *Episode) endByLimit() {
	x.done = true
	x.acts, x.moves = x.acts[:0], x.moves[:0]
	x.obs += fmt.Sprintf("\nStep limit reached: %d steps without a purchase. Your score (min 0.0, max 1.0): 0.00\n", x.steps)
}

// inadmissibleText is the message of a wasted step; long or binary actions
// are shortened and quoted.
func inadmissibleText(action string, n int) string {
	const maxShown = 80
	if len(action) > maxShown {
		action = action[:maxShown] + "…"
	}
	return fmt.Sprintf("Invalid action %q: it is not one of the %d admissible actions. Nothing happens.\n", action, n)
}
