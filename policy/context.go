package policy

import "math/bits"

// maxContextSentences bounds how many observation sentences may mention an
// action's rarest word for them to count as the action's context, and
// maxContextWords how long such a sentence may be (a room's list of every
// receptacle describes nothing in particular).
const (
	maxContextSentences = 2
	maxContextWords     = 20
)

// obsIndex locates words in the current observation's sentences, so that an
// action can be tied to the text that describes its object: a product line
// for "click[b0smym5jgl]", the receptacle's contents for "take apple 1 from
// countertop 1".
type obsIndex struct {
	where table[int32] // word or entity → its entry in sents
	sents [][]int32    // the sentences that contain a word or entity (ascending, unique)
	nList int          // entries of sents in use
	start []int        // first token of each sentence (len = sentences+1)
	goals []uint64     // per sentence: bit i set when it has goal word i
}

// build indexes obs given the instruction's goal words.
func (x *obsIndex) build(obs []token, goal []uint64) {
	x.where.reset()
	x.nList = 0
	x.start, x.goals = x.start[:0], x.goals[:0]
	for i, t := range obs {
		for int32(len(x.start)) <= t.sent {
			x.start = append(x.start, i)
			x.goals = append(x.goals, 0)
		}
		if !t.content() {
			continue
		}
		x.note(t.h, t.sent)
		if i+1 < len(obs) && obs[i+1].num {
			x.note(mix(t.h, obs[i+1].h), t.sent)
		}
		for g, h := range goal {
			if h == t.h && g < 64 {
				x.goals[t.sent] |= 1 << g
			}
		}
	}
	x.start = append(x.start, len(obs))
}

func (x *obsIndex) note(h uint64, sent int32) {
	e, ok := x.where.get(h)
	if !ok {
		if x.nList == len(x.sents) {
			x.sents = append(x.sents, nil)
		}
		e = int32(x.nList)
		x.sents[e] = x.sents[e][:0]
		x.nList++
		*x.where.at(h) = e
	}
	if l := x.sents[e]; len(l) == 0 || l[len(l)-1] != sent {
		x.sents[e] = append(l, sent)
	}
}

// context returns the sentences about act's object: those that mention
// its rarest entity ("apple 1"), or without entities its rarest content
// word ("b0smym5jgl"). It returns nil when there are none, too many, or
// they are too long to be about one thing.
func (x *obsIndex) context(act []token, ents []entity) []int32 {
	var best []int32
	pick := func(h uint64) {
		if l := x.lookup(h); len(l) > 0 && (best == nil || len(l) < len(best)) {
			best = l
		}
	}
	for _, e := range ents {
		pick(e.h)
	}
	if len(ents) == 0 {
		for _, t := range act {
			if t.content() {
				pick(t.h)
			}
		}
	}
	if len(best) > maxContextSentences {
		return nil
	}
	for _, s := range best {
		if x.start[s+1]-x.start[s] > maxContextWords {
			return nil
		}
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

// lookup returns the sentences that contain the word or entity h.
func (x *obsIndex) lookup(h uint64) []int32 {
	if e, ok := x.where.get(h); ok {
		return x.sents[e]
	}
	return nil
}

// words returns the tokens of sentence s.
func (x *obsIndex) words(obs []token, s int32) []token { return obs[x.start[s]:x.start[s+1]] }
