package policy

import "math/bits"

// maxContextSentences bounds how many observation sentences may mention an
// action's rarest word for them to count as the action's context.
const maxContextSentences = 2

// obsIndex locates words in the current observation's sentences, so that an
// action can be tied to the text that describes its object: a product line
// for "click[b0smym5jgl]", the receptacle's contents for "take apple 1 from
// countertop 1".
type obsIndex struct {
	where map[uint64][]int32 // word → sentences that contain it (ascending, unique)
	start []int              // first token of each sentence (len = sentences+1)
	goals []uint64           // per sentence: bit i set when it has goal word i
}

// build indexes obs given the instruction's goal words.
func (x *obsIndex) build(obs []token, goal []uint64) {
	if x.where == nil {
		x.where = map[uint64][]int32{}
	}
	clear(x.where)
	x.start, x.goals = x.start[:0], x.goals[:0]
	for i, t := range obs {
		for int32(len(x.start)) <= t.sent {
			x.start = append(x.start, i)
			x.goals = append(x.goals, 0)
		}
		if !t.content() {
			continue
		}
		if l := x.where[t.h]; len(l) == 0 || l[len(l)-1] != t.sent {
			x.where[t.h] = append(l, t.sent)
		}
		for g, h := range goal {
			if h == t.h && g < 64 {
				x.goals[t.sent] |= 1 << g
			}
		}
	}
	x.start = append(x.start, len(obs))
}

// context returns the sentences that mention the rarest content word of
// act (nil if no such word, or if it is mentioned too often to identify
// anything).
func (x *obsIndex) context(act []token) []int32 {
	var best []int32
	for _, t := range act {
		if l := x.where[t.h]; t.content() && len(l) > 0 && (best == nil || len(l) < len(best)) {
			best = l
		}
	}
	if len(best) > maxContextSentences {
		return nil
	}
	return best
}

// goalFrac is the largest fraction of the goal words one of sents names.
func (x *obsIndex) goalFrac(sents []int32, nGoal int) float64 {
	if nGoal == 0 {
		return 0
	}
	most := 0
	for _, s := range sents {
		most = max(most, bits.OnesCount64(x.goals[s]))
	}
	return float64(most) / float64(min(nGoal, 64))
}

// words returns the tokens of sentence s.
func (x *obsIndex) words(obs []token, s int32) []token { return obs[x.start[s]:x.start[s+1]] }
