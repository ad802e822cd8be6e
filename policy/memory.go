package policy

// memory is what the match flags need to know about the earlier turns of an
// episode. It is built incrementally: one addTurn per turn.
type memory struct {
	goal     []uint64     // content-word hashes of the instruction
	facts    table[facts] // per entity: visited, seen with a goal word; per action: times taken
	prevAct  uint64       // hash of the previous action's tokens (0 at the first turn)
	prevVerb uint64       // hash of the previous action's first word
	verbs    []uint64     // distinct verbs of earlier actions, first use first
	words    []uint64     // distinct content words of earlier actions
	turns    int          // turns added so far
	ents     []entity
}

func newMemory() *memory {
	return &memory{}
}

// reset starts a new episode with the given instruction tokens.
func (m *memory) reset(instr []token) {
	m.facts.reset()
	m.goal = m.goal[:0]
	for _, t := range instr {
		if t.content() {
			m.goal = append(m.goal, t.h)
		}
	}
	m.prevAct, m.prevVerb, m.turns = 0, 0, 0
	m.verbs, m.words = m.verbs[:0], m.words[:0]
}

// isGoal reports whether the word hash h is a content word of the instruction.
func (m *memory) isGoal(h uint64) bool {
	for _, g := range m.goal {
		if g == h {
			return true
		}
	}
	return false
}

// observe records the entities of an observation that share a sentence
// with a goal word.
func (m *memory) observe(obs []token) {
	m.ents = entities(obs, m.ents[:0])
	for _, e := range m.ents {
		if m.sentenceHasGoal(obs, e.sent) {
			m.facts.at(e.h).seenGoal = true
		}
	}
}

func (m *memory) sentenceHasGoal(toks []token, sent int32) bool {
	for _, t := range toks {
		if t.sent == sent && t.content() && m.isGoal(t.h) {
			return true
		}
	}
	return false
}

// addTurn records one finished turn, given the tokens of its observation
// and of its action.
func (m *memory) addTurn(obs, act []token) {
	m.observe(obs)
	m.ents = entities(act, m.ents[:0])
	for _, e := range m.ents {
		m.facts.at(e.h).visited = true
	}
	h := actionHash(act)
	m.facts.at(h).taken++
	m.prevAct = h
	m.prevVerb = 0
	if len(act) > 0 {
		m.prevVerb = act[0].h
		m.verbs = addUnique(m.verbs, m.prevVerb)
	}
	for _, t := range act {
		if t.content() {
			m.words = addUnique(m.words, t.h)
		}
	}
	m.turns++
}

// actionHash identifies an action by its tokens.
func actionHash(toks []token) uint64 {
	h := uint64(0x51ed270b7a9c3f1d)
	for _, t := range toks {
		h = mix(h, t.h)
	}
	return h
}

func addUnique(list []uint64, h uint64) []uint64 {
	for _, x := range list {
		if x == h {
			return list
		}
	}
	return append(list, h)
}

// facts is what the memory knows about one entity or action hash. An
// entity's and an action's hash may coincide: they use separate fields.
type facts struct {
	visited  bool  // the entity was named by an earlier action
	seenGoal bool  // the entity was seen in a sentence that names a goal word
	taken    int32 // times the action was taken
}
