package policy

import "slices"

// actionMemo is what a featurizer keeps about one admissible action text:
// all that depends on the text and the instruction alone, and the
// crossings with the verbs of the episode so far. The admissible lists of
// consecutive states mostly repeat, so each text is tokenised and hashed
// once.
type actionMemo struct {
	toks    []token
	ents    []entity
	hash    uint64  // actionHash(toks)
	textIDs []int32 // its verb, words and bigrams: the embedded ids after the context words
	textKey uint64  // hashIDs(textIDs)
	numIDs  []int32 // whether each of its numbers is one of the instruction's (actionNumberIDs)
	// per content token, in order: its crossings with the goal words, and
	// with the verbs of the episode so far (extended as verbs appear)
	content   []int
	goalCross [][]int32
	verbCross [][]int32
	// the flags fixed by the instruction
	goalFrac, anyGoal, verbInGoal, goalEntity float64
}

// maxMemos bounds the memos kept for one instruction.
const maxMemos = 1 << 12

// memos maps the action texts seen under the current instruction to their
// memos, reusing their storage. Episodes of one task follow each other (a
// group of rollouts, a batch's trajectories), so memos outlive an episode
// while the instruction stays; only the verb crossings are per episode.
type memos struct {
	byText map[string]*actionMemo
	pool   []*actionMemo
	used   int
	epoch  int // counts resets: memos of an older epoch are gone
}

// lastList remembers the previous state's admissible texts and their
// memos: consecutive lists mostly agree position by position, and
// comparing two strings is cheaper than hashing one.
type lastList struct {
	texts []string
	memos []*actionMemo
	epoch int
}

// start begins a list of n texts.
func (ll *lastList) start(n int) {
	for len(ll.texts) < n {
		ll.texts, ll.memos = append(ll.texts, ""), append(ll.memos, nil)
	}
}

// memo returns the memo of text, the a-th of the list.
func (ll *lastList) memo(z *Featurizer, a int, text string) *actionMemo {
	if ll.epoch == z.memos.epoch && ll.memos[a] != nil && ll.texts[a] == text {
		return ll.memos[a]
	}
	if ll.epoch != z.memos.epoch {
		clear(ll.memos)
		ll.epoch = z.memos.epoch
	}
	m := z.memo(text)
	ll.texts[a], ll.memos[a] = text, m
	return m
}

func (ms *memos) reset() {
	clear(ms.byText)
	ms.used = 0
	ms.epoch++
}

// newEpisode keeps the memos for another episode under the same
// instruction: the episode's verbs start over.
func (ms *memos) newEpisode() {
	if ms.used > maxMemos {
		ms.reset()
		return
	}
	for _, m := range ms.pool[:ms.used] {
		for j := range m.verbCross {
			m.verbCross[j] = m.verbCross[j][:0]
		}
	}
}

// get returns the memo of text, computing it on first use.
func (z *Featurizer) memo(text string) *actionMemo {
	ms := &z.memos
	if m, ok := ms.byText[text]; ok {
		return m
	}
	if ms.byText == nil {
		ms.byText = map[string]*actionMemo{}
	}
	if ms.used == len(ms.pool) {
		ms.pool = append(ms.pool, &actionMemo{})
	}
	m := ms.pool[ms.used]
	ms.used++
	z.fillMemo(m, text)
	ms.byText[text] = m
	return m
}

func (z *Featurizer) fillMemo(m *actionMemo, text string) {
	m.toks = tokenize(text, m.toks[:0])
	m.ents = entities(m.toks, m.ents[:0])
	m.hash = actionHash(m.toks)
	m.textIDs = m.textIDs[:0]
	if len(m.toks) > 0 {
		m.textIDs = append(m.textIDs, z.id(nsVerb, m.toks[0].h))
	}
	m.textIDs = z.appendWords(m.textIDs, nsAct, nsActBigram, m.toks)
	m.textKey = hashIDs(m.textIDs)
	m.content = m.content[:0]
	for i, t := range m.toks {
		if t.content() {
			m.content = append(m.content, i)
		}
	}
	m.goalCross = resizeLists(m.goalCross, len(m.content))
	m.verbCross = resizeLists(m.verbCross, len(m.content))
	for j, i := range m.content {
		for _, g := range z.mem.goal {
			m.goalCross[j] = append(m.goalCross[j], z.id(nsCross, mix(g, m.toks[i].h)))
		}
	}
	m.numIDs = z.actionNumberIDs(text, m.numIDs[:0])
	z.staticFlags(m)
}

// resizeLists returns n empty lists, reusing the storage of v.
func resizeLists(v [][]int32, n int) [][]int32 {
	for len(v) < n {
		v = append(v, nil)
	}
	v = v[:n]
	for i := range v {
		v[i] = v[i][:0]
	}
	return v
}

// staticFlags computes the flags of m that depend on the instruction only.
func (z *Featurizer) staticFlags(m *actionMemo) {
	content, goal := 0, 0
	for _, t := range m.toks {
		switch {
		case t.content():
			content++
			if z.mem.isGoal(t.h) {
				goal++
			}
		case t.num && len(z.goalNums) > 0:
			// An instruction that names quantities makes an action's
			// numbers part of what it names: "1.7 oz" names half of
			// "in 2.5 oz", not all of it. Without numbers in the
			// instruction (every household task) "apple 1" stays all goal.
			content++
			if slices.Contains(z.goalNums, t.h) {
				goal++
			}
		}
	}
	m.goalFrac = 0
	if content > 0 {
		m.goalFrac = float64(goal) / float64(content)
	}
	m.anyGoal = b2f(goal > 0)
	m.verbInGoal = b2f(len(m.toks) > 0 && z.mem.isGoal(m.toks[0].h))
	m.goalEntity = 0
	for _, e := range m.ents {
		m.goalEntity = max(m.goalEntity, b2f(z.mem.isGoal(e.word)))
	}
}

// crossings appends the word crossings of m's action (see
// actionCrossings) to ids: per content token, with the instruction, with
// the previous verb, and with every verb used so far in the episode.
func (z *Featurizer) crossings(m *actionMemo, ids []int32) []int32 {
	verbs := z.mem.verbs
	for j, i := range m.content {
		h := m.toks[i].h
		ids = append(ids, m.goalCross[j]...)
		if z.mem.turns > 0 {
			ids = append(ids, z.id(nsPrevCross, mix(z.mem.prevVerb, h)))
		}
		vc := m.verbCross[j]
		for _, v := range verbs[len(vc):] {
			vc = append(vc, z.id(nsVerbCross, mix(v, h)))
		}
		m.verbCross[j] = vc
		ids = append(ids, vc...)
	}
	return ids
}
