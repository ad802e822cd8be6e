package policy

import (
	"cmp"
	"math"
	"slices"
)

// NumFlags is the number of match flags computed for every action.
const NumFlags = 11

// The match flags, in order. All are in [0, 1] except flagRepeatCount.
const (
	flagGoalFrac     = iota // fraction of the action's content words (and numbers, when the instruction has some) that are goal words
	flagAnyGoal             // the action names a goal word
	flagVerbInGoal          // the action's verb is a goal word ("heat" in "heat some egg ...")
	flagGoalEntity          // the action's object is the goal object ("apple 1" for an apple goal)
	flagVisited             // the action names an entity an earlier action named
	flagInObs               // the action names an entity in the current observation
	flagSeenWithGoal        // the action names an entity seen next to a goal word
	flagRepeatPrev          // the action repeats the previous action
	flagRepeatCount         // log(1 + times the action was taken before)
	flagSameVerb            // the action's verb is the previous action's verb
	flagContextGoal         // fraction of the goal words named by the observation text about the action's object
)

// Feature namespaces: every hashed feature is salted with its kind.
const (
	nsBias uint64 = iota + 0x7f3a
	nsInstr
	nsObs
	nsObsBigram
	nsHist
	nsLastAct
	nsLastVerb
	nsStep
	nsVerb
	nsAct
	nsActBigram
	nsCross
	nsPrevCross
	nsContext
	nsEpisodeWord
	nsVerbCross
	nsNumbers
	nsActNumbers
)

// maxStepFeature caps the step-count feature.
const maxStepFeature = 100

// Features is the sparse form of one State, computed once and reused by
// every forward pass over it.
type Features struct {
	state  []int32   // unique bucket ids of the state-side features
	actOff []int32   // action a's ids are actIDs[actOff[a]:actOff[a+1]]
	actMid []int32   // of which actIDs[actOff[a]:actMid[a]] are also embedded
	actIDs []int32   // bucket ids of the action-side features
	flags  []float64 // NumActions × NumFlags match flags
	keys   []uint64  // per action, a hash of its embedded ids (see actionCache)
}

// NumActions is the number of admissible actions the features describe.
func (f *Features) NumActions() int { return len(f.actOff) - 1 }

// StateSimilarity is the Jaccard similarity of two states' sparse
// state-side features, in [0, 1]: a parameter-free measure of how alike
// two states read.
func StateSimilarity(a, b *Features) float64 {
	x, y := a.state, b.state
	common := 0
	for i, j := 0, 0; i < len(x) && j < len(y); {
		switch {
		case x[i] == y[j]:
			common++
			i++
			j++
		case x[i] < y[j]:
			i++
		default:
			j++
		}
	}
	union := len(x) + len(y) - common
	if union == 0 {
		return 1
	}
	return float64(common) / float64(union)
}

// embKey returns the cache key of action a's embedded ids.
func (f *Features) embKey(a int) uint64 {
	if f.keys == nil {
		return hashIDs(f.embedded(a))
	}
	return f.keys[a]
}

// embedded returns the ids of action a that feed its embedding.
func (f *Features) embedded(a int) []int32 { return f.actIDs[f.actOff[a]:f.actMid[a]] }

// linear returns all ids of action a; each has a linear score weight.
func (f *Features) linear(a int) []int32 { return f.actIDs[f.actOff[a]:f.actOff[a+1]] }

// Flags returns action a's match flags (shared; do not modify).
func (f *Features) Flags(a int) []float64 { return f.flags[a*NumFlags : (a+1)*NumFlags] }

// Featurizer turns states into Features. It keeps scratch buffers and an
// episode memory, so it is not safe for concurrent use; make one per
// goroutine with Policy.NewFeaturizer.
type Featurizer struct {
	buckets   uint64
	pow2      bool // buckets is a power of two: a mask takes the remainder
	history   int
	mem       *memory
	instr     []token
	instrText string
	instrNums []number // the instruction's numbers ("lower than 60.00")
	goalNums  []uint64 // the hashes of the instruction's digit words ("60", "00"), see staticFlags
	ctxNums   []number // scratch: the numbers of an action's context
	sentStart []int    // where the sentences of obs begin, once numberIDs needs them
	stable    []int32  // sorted ids of the bias, the instruction and the episode's words
	words     int      // how many of mem.words stable holds
	dyn       []int32  // the other state ids (see stateIDs)
	obs       []token
	obsText   string // the text of obs
	turnObs   []token
	actToks   []token
	hist      []token
	obsEnts   []entity
	goalObs   []uint64
	index     obsIndex
	ctx       []int32  // context sentences of the current action
	memos     memos    // the admissible actions of the episode so far
	last      lastList // the memos of the previous admissible list
	work      Features // the features of the last state, see scratch
}

// NewFeaturizer returns a featurizer for p's configuration.
func (p *Policy) NewFeaturizer() *Featurizer {
	b := uint64(p.cfg.Buckets)
	return &Featurizer{buckets: b, pow2: b&(b-1) == 0, history: p.cfg.History, mem: newMemory()}
}

// suits reports whether z featurises states as p's own featurizers do.
func (z *Featurizer) suits(p *Policy) bool {
	return z.buckets == uint64(p.cfg.Buckets) && z.history == p.cfg.History
}

// Features computes the features of one state from scratch (reading its
// whole history). It returns ErrNoActions for an empty admissible list.
func (z *Featurizer) Features(s *State) (*Features, error) {
	return z.kept(z.scratch(s, true))
}

// Next computes the features of s incrementally: s must be the state
// that follows the one last given to Features or Next, with one more turn
// of History. Rollouts use it to read each turn once; when s does not
// extend the previous state by exactly one turn it falls back to Features.
func (z *Featurizer) Next(s *State) (*Features, error) {
	return z.kept(z.scratch(s, false))
}

// kept returns a compact copy of scratch features, for callers that keep
// them.
func (z *Featurizer) kept(f *Features, err error) (*Features, error) {
	if err != nil {
		return nil, err
	}
	return f.compact(), nil
}

// scratch computes the features of s, from scratch when first is set or s
// does not continue the previous state, into the featurizer's own buffers:
// they stay valid until its next call, which suits a caller that uses them
// once (a rollout) and saves it their allocation.
func (z *Featurizer) scratch(s *State, first bool) (*Features, error) {
	if first || len(s.History) != z.mem.turns+1 || s.Instruction != z.instrText {
		z.begin(s)
	} else {
		z.addTurn(s.History[len(s.History)-1])
	}
	if err := z.fill(s, &z.work); err != nil {
		return nil, err
	}
	return &z.work, nil
}

// begin reads the instruction and the whole history of s.
func (z *Featurizer) begin(s *State) {
	if s.Instruction == z.instrText && z.memos.byText != nil {
		z.memos.newEpisode()
	} else {
		z.memos.reset()
	}
	z.instr = tokenize(s.Instruction, z.instr[:0])
	z.instrText = s.Instruction
	z.instrNums = appendNumbers(s.Instruction, 0, len(s.Instruction), z.instrNums[:0])
	z.goalNums = z.goalNums[:0]
	for _, t := range z.instr {
		if t.num && !slices.Contains(z.goalNums, t.h) {
			z.goalNums = append(z.goalNums, t.h)
		}
	}
	z.mem.reset(z.instr)
	z.stable = z.stable[:0]
	z.addStable(z.id(nsBias, 0))
	for _, t := range z.instr {
		if t.content() {
			z.addStable(z.id(nsInstr, t.h))
		}
	}
	z.words = 0
	z.obsText = ""
	for _, t := range s.History {
		z.addTurn(t)
	}
}

// addTurn records one finished turn in z.mem. The turn's observation is
// usually the one z.obs holds, and its action one of the episode's memos,
// so neither is tokenised again.
func (z *Featurizer) addTurn(t Turn) {
	obs := z.obs
	if t.Observation != z.obsText {
		z.turnObs = tokenize(t.Observation, z.turnObs[:0])
		obs = z.turnObs
	}
	z.mem.addTurn(obs, z.actionTokens(t.Action))
	for _, w := range z.mem.words[z.words:] {
		z.addStable(z.id(nsEpisodeWord, w))
	}
	z.words = len(z.mem.words)
}

// actionTokens returns the tokens of an action text: its memo's if it has
// one (valid until the next call otherwise).
func (z *Featurizer) actionTokens(text string) []token {
	if m, ok := z.memos.byText[text]; ok {
		return m.toks
	}
	z.actToks = tokenize(text, z.actToks[:0])
	return z.actToks
}

// compact returns a copy of f in three allocations sized to fit.
func (f *Features) compact() *Features {
	var sl slab
	sl.reserve(f, 1)
	return sl.copy(f, new(Features))
}

// slab holds the features of many states in a few large allocations.
type slab struct {
	ints   []int32
	floats []float64
	keys   []uint64
}

// reserve makes room for about n states like f.
func (sl *slab) reserve(f *Features, n int) {
	sl.ints = make([]int32, 0, n*(len(f.state)+len(f.actOff)+len(f.actMid)+len(f.actIDs)))
	sl.floats = make([]float64, 0, n*len(f.flags))
	sl.keys = make([]uint64, 0, n*len(f.keys))
}

// copy copies f into dst, backed by the slab; a full slab starts a new
// allocation rather than move what it holds.
func (sl *slab) copy(f, dst *Features) *Features {
	if n := len(f.state) + len(f.actOff) + len(f.actMid) + len(f.actIDs); cap(sl.ints)-len(sl.ints) < n {
		sl.ints = make([]int32, 0, max(n, cap(sl.ints)/2))
	}
	if cap(sl.floats)-len(sl.floats) < len(f.flags) || cap(sl.keys)-len(sl.keys) < len(f.keys) {
		sl.floats = make([]float64, 0, max(len(f.flags), cap(sl.floats)/2))
		sl.keys = make([]uint64, 0, max(len(f.keys), cap(sl.keys)/2))
	}
	dst.state, sl.ints = appendTail(sl.ints, f.state)
	dst.actOff, sl.ints = appendTail(sl.ints, f.actOff)
	dst.actMid, sl.ints = appendTail(sl.ints, f.actMid)
	dst.actIDs, sl.ints = appendTail(sl.ints, f.actIDs)
	dst.flags, sl.floats = appendTail(sl.floats, f.flags)
	dst.keys, sl.keys = appendTail(sl.keys, f.keys)
	return dst
}

// appendTail appends v to buf, which has room for it, and returns the
// appended part (capped, so that appending to it cannot overwrite buf).
func appendTail[T any](buf, v []T) (part, grown []T) {
	buf = append(buf, v...)
	return buf[len(buf)-len(v) : len(buf) : len(buf)], buf
}

// Episode computes the features of the states of one episode in order, as
// StatesFromTrajectory returns them: state k's History must be state k-1's
// plus one turn. It reads each turn once, and keeps all the features in a
// few allocations.
func (z *Featurizer) Episode(states []State) ([]*Features, error) {
	out := make([]*Features, len(states))
	all := make([]Features, len(states))
	var sl slab
	for k := range states {
		f, err := z.scratch(&states[k], k == 0)
		if err != nil {
			return nil, err
		}
		if k == 0 {
			sl.reserve(f, len(states)+len(states)/4)
		}
		out[k] = sl.copy(f, &all[k])
	}
	return out, nil
}

// fill computes s's features into f, reusing its storage, given that
// z.mem holds s's history and z.instr its instruction tokens.
func (z *Featurizer) fill(s *State, f *Features) error {
	n := len(s.Admissible)
	if n == 0 {
		return ErrNoActions
	}
	f.actOff, f.actMid, f.actIDs = append(f.actOff[:0], 0), f.actMid[:0], f.actIDs[:0]
	f.flags = grow(f.flags, n*NumFlags)
	clear(f.flags)
	z.obs, z.obsText = tokenize(s.Observation, z.obs[:0]), s.Observation
	z.sentStart = z.sentStart[:0]
	z.obsEnts = entities(z.obs, z.obsEnts[:0])
	z.goalObs = z.goalObs[:0]
	for _, e := range z.obsEnts {
		if z.mem.sentenceHasGoal(z.obs, e.sent) {
			z.goalObs = append(z.goalObs, e.h)
		}
	}
	z.index.build(z.obs, z.mem.goal)
	f.state = z.stateIDs(s, f.state[:0])
	f.keys = f.keys[:0]
	z.last.start(len(s.Admissible))
	for a, text := range s.Admissible {
		m := z.last.memo(z, a, text)
		z.ctx = z.index.context(m.toks, m.ents)
		from := len(f.actIDs)
		f.actIDs = z.contextIDs(f.actIDs)
		key := m.textKey
		if len(f.actIDs) > from {
			key = mix(hashIDs(f.actIDs[from:]), key)
		}
		f.keys = append(f.keys, key)
		f.actIDs = append(f.actIDs, m.textIDs...)
		f.actMid = append(f.actMid, int32(len(f.actIDs)))
		f.actIDs = z.crossings(m, f.actIDs)
		f.actIDs = z.numberIDs(f.actIDs)
		f.actIDs = append(f.actIDs, m.numIDs...)
		f.actOff = append(f.actOff, int32(len(f.actIDs)))
		z.actionFlags(m, f.flags[a*NumFlags:(a+1)*NumFlags])
	}
	return nil
}

func (z *Featurizer) id(ns, h uint64) int32 {
	x := mix(ns, h)
	if z.pow2 {
		return int32(x & (z.buckets - 1)) // x % buckets, without a division
	}
	return int32(x % z.buckets)
}

// stateIDs lists the state-side features: bias, instruction words,
// observation words and bigrams, the words of every earlier action, recent
// action words, the last action, the step count — sorted, without
// repeats. Those fixed for the episode so far are kept sorted in z.stable;
// only the others are sorted, and the two merged.
func (z *Featurizer) stateIDs(s *State, ids []int32) []int32 {
	dyn := append(z.dyn[:0], z.id(nsStep, uint64(min(len(s.History), maxStepFeature))))
	dyn = z.appendWords(dyn, nsObs, nsObsBigram, z.obs)
	from := max(0, len(s.History)-z.history)
	for i := from; i < len(s.History); i++ {
		z.hist = z.actionTokens(s.History[i].Action)
		last := i == len(s.History)-1
		for j, t := range z.hist {
			if t.content() {
				dyn = append(dyn, z.id(nsHist, t.h))
			}
			if last && j == 0 {
				dyn = append(dyn, z.id(nsLastVerb, t.h))
			}
		}
		if last {
			dyn = append(dyn, z.id(nsLastAct, actionHash(z.hist)))
		}
	}
	slices.Sort(dyn)
	z.dyn = dyn
	return mergeUnique(ids, z.stable, dyn)
}

// mergeUnique appends to dst the sorted union, without repeats, of a
// (sorted, no repeats) and b (sorted).
func mergeUnique(dst, a, b []int32) []int32 {
	last, have := int32(0), len(dst) > 0
	if have {
		last = dst[len(dst)-1]
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var v int32
		if j == len(b) || (i < len(a) && a[i] <= b[j]) {
			v = a[i]
			i++
		} else {
			v = b[j]
			j++
		}
		if !have || v != last {
			dst = append(dst, v)
			last, have = v, true
		}
	}
	return dst
}

// addStable adds id to z.stable, keeping it sorted without repeats.
func (z *Featurizer) addStable(id int32) {
	if i, found := slices.BinarySearch(z.stable, id); !found {
		z.stable = slices.Insert(z.stable, i, id)
	}
}

// appendWords adds the content words of toks and the bigrams within a sentence.
func (z *Featurizer) appendWords(ids []int32, nsWord, nsBigram uint64, toks []token) []int32 {
	for i, t := range toks {
		if t.content() {
			ids = append(ids, z.id(nsWord, t.h))
		}
		if i > 0 && toks[i-1].sent == t.sent {
			ids = append(ids, z.id(nsBigram, mix(toks[i-1].h, t.h)))
		}
	}
	return ids
}

// numberIDs appends, for every number of the current action's context
// (z.ctx) and every number of the instruction, how the two compare, keyed
// by the instruction's word before its number: "$45.99" on an item's
// result line against "lower than 60.00" is "than: below". A price is a
// number to compare, not a word to remember, and the other features see
// numbers only as hashed words. These feed the linear score only; an
// instruction without numbers (every household task) adds none and reads
// nothing.
func (z *Featurizer) numberIDs(ids []int32) []int32 {
	if len(z.instrNums) == 0 || len(z.ctx) == 0 {
		return ids
	}
	if len(z.sentStart) == 0 { // once a state, for its first action with a context
		z.sentStart = sentenceStarts(z.obsText, z.sentStart)
	}
	for _, sent := range z.ctx {
		end := len(z.obsText)
		if int(sent)+1 < len(z.sentStart) {
			end = z.sentStart[sent+1]
		}
		z.ctxNums = appendNumbers(z.obsText, z.sentStart[sent], end, z.ctxNums[:0])
		for _, x := range z.ctxNums {
			for _, n := range z.instrNums {
				ids = append(ids, z.id(nsNumbers, mix(n.before, uint64(2+cmp.Compare(x.val, n.val)))))
			}
		}
	}
	return ids
}

// actionNumberIDs appends, for every number the action names itself
// ("click[55 inch]", "click[2.5 oz]", "click[set of 2]"), whether the
// instruction names the same number. An option row names all of its
// values ("55 inch", "65 inch", "75 inch"), so the context's numbers
// (numberIDs) are alike for each of them; only the action's own number
// tells the size the instruction asks for from the others. Unkeyed, the
// weight learned on one goal's "55 inch" carries to another's "set of 2".
// An instruction without numbers (every household task) adds none.
func (z *Featurizer) actionNumberIDs(text string, ids []int32) []int32 {
	if len(z.instrNums) == 0 {
		return ids
	}
	z.ctxNums = appendNumbers(text, 0, len(text), z.ctxNums[:0])
	for _, x := range z.ctxNums {
		named := slices.ContainsFunc(z.instrNums, func(n number) bool { return n.val == x.val })
		ids = append(ids, z.id(nsActNumbers, uint64(b2f(named))))
	}
	return ids
}

// contextIDs appends the content words of the observation text about the
// current action's object (z.ctx). With the verb, words and bigrams of the
// action (actionMemo.textIDs) they describe the action itself and feed
// both the action embedding and the linear score; the word crossings of
// the action with the instruction, with the previous verb, and with every
// verb used so far in the episode (which tells the stage of a task: taken,
// cleaned, ...; see crossings) feed the linear score only.
func (z *Featurizer) contextIDs(ids []int32) []int32 {
	for _, sent := range z.ctx {
		for _, t := range z.index.words(z.obs, sent) {
			if t.content() {
				ids = append(ids, z.id(nsContext, t.h))
			}
		}
	}
	return ids
}

// actionFlags fills the match flags of m's action (with z.ctx).
func (z *Featurizer) actionFlags(m *actionMemo, fl []float64) {
	fl[flagGoalFrac] = m.goalFrac
	fl[flagAnyGoal] = m.anyGoal
	fl[flagVerbInGoal] = m.verbInGoal
	fl[flagGoalEntity] = m.goalEntity
	for _, e := range m.ents {
		known, _ := z.mem.facts.get(e.h)
		fl[flagVisited] = max(fl[flagVisited], b2f(known.visited))
		fl[flagInObs] = max(fl[flagInObs], b2f(hasEntity(z.obsEnts, e.h)))
		fl[flagSeenWithGoal] = max(fl[flagSeenWithGoal], b2f(known.seenGoal || slices.Contains(z.goalObs, e.h)))
	}
	fl[flagRepeatPrev] = b2f(z.mem.turns > 0 && m.hash == z.mem.prevAct)
	taken, _ := z.mem.facts.get(m.hash)
	fl[flagRepeatCount] = log1pCount(taken.taken)
	fl[flagSameVerb] = b2f(z.mem.turns > 0 && len(m.toks) > 0 && m.toks[0].h == z.mem.prevVerb)
	fl[flagContextGoal] = z.index.goalFrac(z.ctx, len(z.mem.goal))
}

// log1pCounts holds math.Log1p of the small counts.
var log1pCounts = func() (t [64]float64) {
	for n := range t {
		t[n] = math.Log1p(float64(n))
	}
	return t
}()

// log1pCount is math.Log1p(float64(n)).
func log1pCount(n int32) float64 {
	if n >= 0 && int(n) < len(log1pCounts) {
		return log1pCounts[n]
	}
	return math.Log1p(float64(n))
}

func hasEntity(ents []entity, h uint64) bool {
	for _, e := range ents {
		if e.h == h {
			return true
		}
	}
	return false
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
