package shop

import (
	"slices"
	"sync"
)

// world is everything deterministic about a configuration: the catalogue,
// its search index and the lazily generated goals. Worlds are cached per
// configuration and shared by every Env and Episode; they are immutable
// once built, except for goals filled in on first use.
type world struct {
	cfg     Config
	cat     *catalogue
	index   *bm25
	members [][]int // product indices by family
	goals   []goalSlot
}

// goalSlot holds one lazily generated goal.
type goalSlot struct {
	once sync.Once
	g    *goal
	err  error
}

var (
	worldsMu sync.Mutex
	worlds   = map[Config]*world{} // keyed by worldKey
)

// worldKey is the part of a Config the world depends on: everything but
// the preset's name and the step limit.
func worldKey(cfg Config) Config {
	cfg.Preset, cfg.MaxSteps, cfg.Reward = "", 0, ""
	return cfg
}

// worldFor returns the cached world of cfg, building it on first use.
func worldFor(cfg Config) *world {
	key := worldKey(cfg)
	worldsMu.Lock()
	defer worldsMu.Unlock()
	if w, ok := worlds[key]; ok {
		return w
	}
	w := newWorld(cfg)
	worlds[key] = w
	return w
}

// newWorld builds the catalogue and its index.
func newWorld(cfg Config) *world {
	w := &world{cfg: cfg, cat: buildCatalogue(cfg.CatalogueSize, cfg.NearDuplicates), goals: make([]goalSlot, cfg.Goals)}
	docs := make([]string, len(w.cat.products))
	for i := range w.cat.products {
		p := &w.cat.products[i]
		docs[i] = p.searchText()
		for len(w.members) <= p.family {
			w.members = append(w.members, nil)
		}
		w.members[p.family] = append(w.members[p.family], i)
	}
	w.index = newBM25(docs)
	return w
}

// goal returns goal i, generating it on first use.
func (w *world) goal(i int) (*goal, error) {
	s := &w.goals[i]
	s.once.Do(func() { s.g, s.err = newGoal(w, i) })
	return s.g, s.err
}

// search returns the ranked product indices for query.
func (w *world) search(query string) []int32 {
	hits := w.index.search(query, ResultsLimit)
	out := make([]int32, len(hits))
	for i, h := range hits {
		out[i] = h.doc
	}
	return out
}

// familyLacks reports whether some near-duplicate of p lacks attribute a.
func (w *world) familyLacks(p *product, a string) bool {
	for _, m := range w.members[p.family] {
		if !slices.Contains(w.cat.products[m].attrs, a) {
			return true
		}
	}
	return false
}
