package prm

import (
	"math"
	"strconv"
	"strings"
)

// contextGroups fills the ActionContext feature groups of one step.
//
// The action's argument is its words after the verb (after the first two
// when the shorter form names nothing: "go to countertop 1"). Its context
// is every observation line holding the argument's words in order: the
// result line of an item id, the option row of an option, the sentence
// that mentions a receptacle. From the context come
//   - tagContext: its words (not the argument's own), tagged by the verb;
//   - tagContextMatch: those words the instruction names, and their count;
//   - tagNumbers: how each number of the context compares with each number
//     of the instruction, keyed by the instruction word before that number
//     ("lower than 40.00": a price below the limit);
//
// and from the whole observation, tagObsMatch: how many of the
// instruction's words the observation names, by verb (a page that shows
// what was asked for is one to buy on).
func contextGroups(s *tokenScratch, instruction, observation, action string) {
	if len(s.action) == 0 {
		return
	}
	g := &s.groups
	verb := s.action[0]
	arg := s.action[1:]
	found := contextLines(s, observation, arg, verb)
	if !found && len(arg) > 1 {
		contextLines(s, observation, arg[1:], verb)
	}
	matches := uint64(0)
	for _, w := range s.line {
		if contains(s.instr, w) {
			matches++
			g[tagContextMatch] = append(g[tagContextMatch], mix(tagContextMatch, w))
		}
	}
	if len(s.line) > 0 {
		g[tagContextMatch] = append(g[tagContextMatch], mix(mix(tagContextMatch, verb), min(matches, 8)))
	}
	s.instrNums = numbersOf(instruction, s.instrNums[:0])
	for _, x := range s.ctxNums {
		for _, y := range s.instrNums {
			g[tagNumbers] = append(g[tagNumbers], mix(mix(mix(tagNumbers, verb), y.before), compare(x.v, y.v)))
		}
	}
	seen := uint64(0)
	for _, w := range s.instr {
		if contains(s.obs, w) {
			seen++
		}
	}
	if len(s.instr) > 0 {
		frac := uint64(math.Round(4 * float64(seen) / float64(len(s.instr))))
		g[tagObsMatch] = append(g[tagObsMatch], mix(mix(tagObsMatch, verb), frac))
	}
}

// contextLines gathers, into s.line (words) and s.ctxNums (numbers), the
// observation lines that contain the words arg in order, and the context
// word features; it reports whether any line did.
func contextLines(s *tokenScratch, observation string, arg []uint64, verb uint64) bool {
	s.line, s.ctxNums = s.line[:0], s.ctxNums[:0]
	if len(arg) == 0 {
		return false
	}
	found := false
	for line := range strings.Lines(observation) {
		s.lineWords = wordHashes(line, s.lineWords[:0])
		words := s.lineWords
		at := indexOf(words, arg)
		if at < 0 {
			continue
		}
		found = true
		for i, w := range words {
			if i >= at && i < at+len(arg) {
				continue // the argument itself is in the action's features
			}
			s.line = append(s.line, w)
			s.groups[tagContext] = append(s.groups[tagContext], mix(mix(tagContext, verb), w))
		}
		s.ctxNums = numbersOf(line, s.ctxNums)
	}
	return found
}

// indexOf returns where sub starts in words, or −1.
func indexOf(words, sub []uint64) int {
	for i := 0; i+len(sub) <= len(words); i++ {
		match := true
		for j, w := range sub {
			if words[i+j] != w {
				match = false
				break
			}
		}
		if match {
			return i
		}
	}
	return -1
}

// number is a decimal number of a text and the hash of the word before it.
type number struct {
	v      float64
	before uint64
}

// numbersOf appends the decimal numbers of text (digits with an optional
// fraction: 40.00, 31.99, 100), each with the word before it.
func numbersOf(text string, dst []number) []number {
	prev := uint64(0)
	for i := 0; i < len(text); {
		c := text[i]
		if c >= '0' && c <= '9' {
			j := i
			for j < len(text) && (text[j] >= '0' && text[j] <= '9' || text[j] == '.' && j+1 < len(text) && text[j+1] >= '0' && text[j+1] <= '9') {
				j++
			}
			if v, err := strconv.ParseFloat(text[i:j], 64); err == nil {
				dst = append(dst, number{v: v, before: prev})
			}
			i = j
			continue
		}
		if isLetter(c) {
			j := i
			for j < len(text) && (isLetter(text[j]) || text[j] >= '0' && text[j] <= '9') {
				j++
			}
			prev = hashWord(text[i:j])
			i = j
			continue
		}
		i++
	}
	return dst
}

// hashWord is the hash wordHashes gives a single word.
func hashWord(w string) uint64 {
	var one [1]uint64
	if ws := wordHashes(w, one[:0]); len(ws) == 1 {
		return ws[0]
	}
	return 0
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80 }

// compare is −1, 0 or 1 as x is below, equal to or above y, shifted to
// be a hash input.
func compare(x, y float64) uint64 {
	switch {
	case x < y:
		return 1
	case x > y:
		return 3
	}
	return 2
}
