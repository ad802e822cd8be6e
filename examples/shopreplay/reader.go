package main

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/rspo-dev/rspo/envs"
)

// reader is a scripted shopper that sees only what a policy sees (the
// instruction, the page and the admissible actions) and does what a
// first-page shopper would: search with the query that names the most of
// the instruction's words, open the result whose line names the most of
// them (within the price limit, with usePrice), click every offered option
// the instruction names, buy. It never pages, reads a description or goes
// back. Its success is what the results page alone can give, and with and
// without usePrice it measures what reading the price is worth.
type reader struct {
	usePrice bool
}

var (
	resultLine = regexp.MustCompile(`\[button\] (\S+) \[button_\] (.*) \[SEP\] \$([0-9]+(?:\.[0-9]+)?)`)
	priceLimit = regexp.MustCompile(`lower than ([0-9]+(?:\.[0-9]+)?)`)
)

// fillers are the instruction's words that name nothing to shop for.
var fillers = map[string]bool{}

func init() {
	for _, w := range strings.Fields("i need a an and price lower than dollars am looking for that is find me with want to buy which in some the of") {
		fillers[w] = true
	}
}

// words are the lower-cased words of s (numbers such as "2.5" included)
// that are not fillers.
func words(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.')
	}) {
		if w = strings.Trim(w, "."); w != "" && !fillers[w] {
			out = append(out, w)
		}
	}
	return out
}

// named counts the words of goal that text names.
func named(goal []string, text string) int {
	have := map[string]bool{}
	for _, w := range words(text) {
		have[w] = true
	}
	n := 0
	for _, w := range goal {
		if have[w] {
			n++
		}
	}
	return n
}

// Act chooses the reader's action on the current page.
func (r reader) Act(ep envs.Episode, _ *rand.Rand) (string, error) {
	acts := ep.Admissible()
	if len(acts) == 0 {
		return "", fmt.Errorf("%w in task %s", envs.ErrNoActions, ep.Task().ID)
	}
	instr := ep.Task().Instruction
	goal := words(priceLimit.ReplaceAllString(instr, ""))
	obs := ep.Observation()
	switch {
	case strings.HasPrefix(acts[0], "search["):
		return mostNamed(goal, acts), nil
	case strings.Contains(obs, "Total results"):
		return r.pickResult(goal, instr, obs, acts), nil
	case slices.Contains(acts, "click[buy now]"):
		for _, a := range acts {
			inner := strings.TrimSuffix(strings.TrimPrefix(a, "click["), "]")
			if kind(a) != "click[option]" || strings.Contains(obs, "[clicked button] "+inner+" [clicked button_]") {
				continue
			}
			if v := words(inner); len(v) > 0 && named(goal, inner) == len(v) {
				return a, nil
			}
		}
		return "click[buy now]", nil
	}
	return "click[< prev]", nil
}

// pickResult opens the result line that names the most goal words, within
// the price limit when r.usePrice and one is.
func (r reader) pickResult(goal []string, instr, obs string, acts []string) string {
	limit := -1.0
	if m := priceLimit.FindStringSubmatch(instr); r.usePrice && m != nil {
		limit, _ = strconv.ParseFloat(m[1], 64)
	}
	best, most := "", -1
	for _, m := range resultLine.FindAllStringSubmatch(obs, -1) {
		price, _ := strconv.ParseFloat(m[3], 64)
		if limit >= 0 && price > limit {
			continue
		}
		if n := named(goal, m[2]); n > most {
			best, most = "click["+strings.ToLower(m[1])+"]", n
		}
	}
	if best == "" || !slices.Contains(acts, best) { // nothing within the limit: the first result
		for _, a := range acts {
			if kind(a) == "click[item]" {
				return a
			}
		}
		return acts[0]
	}
	return best
}

// mostNamed is the action that names the most goal words (the first on a tie).
func mostNamed(goal, acts []string) string {
	best, most := acts[0], -1
	for _, a := range acts {
		if n := named(goal, a); n > most {
			best, most = a, n
		}
	}
	return best
}
