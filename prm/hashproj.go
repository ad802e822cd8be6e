package prm

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
)

// HashProjectionName is the registered name of the default featurizer.
const HashProjectionName = "hash-projection"

func init() {
	RegisterFeaturizer(HashProjectionName, func(params json.RawMessage) (Featurizer, error) {
		var cfg HashProjectionConfig
		if err := json.Unmarshal(params, &cfg); err != nil {
			return nil, fmt.Errorf("%w: hash-projection params: %v", ErrInvalidConfig, err)
		}
		return NewHashProjection(cfg)
	})
}

// HashProjectionConfig configures HashProjection. The zero value gives the
// defaults.
type HashProjectionConfig struct {
	// Dim is the feature dimension. Default 256.
	Dim int `json:"dim"`
	// Seed fixes the random projection; 0 is a valid seed.
	Seed uint64 `json:"seed"`
	// NGram is the longest word n-gram hashed within a field. Default 2.
	NGram int `json:"ngram"`
	// Nonzeros is how many entries each hashed feature's random vector
	// touches (a sparse random projection). Default 16.
	Nonzeros int `json:"nonzeros"`
	// ActionContext adds what the observation says about the action's
	// object (see contextGroups): the words of the observation lines that
	// name the action's argument, those of them the instruction names, and
	// how the numbers there compare with the instruction's. An action
	// such as the shop's click[b0smym5jgl] is otherwise an opaque id.
	// Default false (snapshots written before it existed load unchanged).
	ActionContext bool `json:"action_context,omitempty"`
}

func (c HashProjectionConfig) withDefaults() HashProjectionConfig {
	if c.Dim == 0 {
		c.Dim = 256
	}
	if c.NGram == 0 {
		c.NGram = 2
	}
	if c.Nonzeros == 0 {
		c.Nonzeros = 16
	}
	return c
}

// Validate reports every problem with the (defaulted) configuration.
func (c HashProjectionConfig) Validate() error {
	var errs []error
	if c.Dim < 1 || c.Dim > MaxFeatureDim {
		errs = append(errs, &ConfigError{Field: "Dim", Reason: fmt.Sprintf("%d not in 1..%d", c.Dim, MaxFeatureDim)})
	}
	if c.NGram < 1 || c.NGram > 5 {
		errs = append(errs, &ConfigError{Field: "NGram", Reason: fmt.Sprintf("%d not in 1..5", c.NGram)})
	}
	if c.Nonzeros < 1 || c.Nonzeros > c.Dim {
		errs = append(errs, &ConfigError{Field: "Nonzeros", Reason: fmt.Sprintf("%d not in 1..Dim (%d)", c.Nonzeros, c.Dim)})
	}
	return errors.Join(errs...)
}

// MaxFeatureDim bounds a featurizer's dimension (and what a snapshot may claim).
const MaxFeatureDim = 1 << 14

// HashProjection is the default frozen featurizer. Each step's text is cut
// into lower-case words; hashed features are formed per field (action,
// observation, instruction words and n-grams) and across fields (action
// word × instruction word, action words found in the instruction, the
// action verb with how many of its words the instruction names, action
// verb × observation word). Each hashed feature stands for a seeded sparse
// pseudo-random ±1 vector; h_t is their sum, each feature group scaled to
// unit weight, so no projection matrix is ever stored.
type HashProjection struct {
	cfg     HashProjectionConfig
	scratch sync.Pool
}

var _ SpecFeaturizer = (*HashProjection)(nil)

// NewHashProjection builds the featurizer; zero config fields take their
// defaults. An invalid config returns an error wrapping ErrInvalidConfig.
func NewHashProjection(cfg HashProjectionConfig) (*HashProjection, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h := &HashProjection{cfg: cfg}
	h.scratch.New = func() any { return new(tokenScratch) }
	return h, nil
}

// DefaultFeaturizer returns HashProjection with its defaults.
func DefaultFeaturizer() *HashProjection {
	h, err := NewHashProjection(HashProjectionConfig{})
	if err != nil {
		panic(err) // the defaults are valid
	}
	return h
}

// Config returns the featurizer's configuration with defaults filled in.
func (h *HashProjection) Config() HashProjectionConfig { return h.cfg }

// Dim implements Featurizer.
func (h *HashProjection) Dim() int { return h.cfg.Dim }

// Spec implements SpecFeaturizer.
func (h *HashProjection) Spec() FeaturizerSpec {
	params, _ := json.Marshal(h.cfg) // plain ints cannot fail
	return FeaturizerSpec{Name: HashProjectionName, Params: params}
}

// Feature group tags: each group of hashed features is hashed apart from
// the others and scaled to unit weight.
const (
	tagAction uint64 = iota + 1
	tagActionNGram
	tagObs
	tagObsNGram
	tagInstr
	tagCross
	tagMatch
	tagVerbObs
	tagMatchCount
	tagContext
	tagContextMatch
	tagNumbers
	tagObsMatch
	numTags
)

// tokenScratch holds per-call buffers so Features does not allocate.
type tokenScratch struct {
	action, obs, instr []uint64
	groups             [numTags][]uint64
	line, lineWords    []uint64
	ctxNums, instrNums []number
}

// Features implements Featurizer.
func (h *HashProjection) Features(instruction, observation, action string, dst []float32) {
	s := h.scratch.Get().(*tokenScratch)
	defer h.scratch.Put(s)
	s.action = wordHashes(action, s.action[:0])
	s.obs = wordHashes(observation, s.obs[:0])
	s.instr = wordHashes(instruction, s.instr[:0])
	for i := range s.groups {
		s.groups[i] = s.groups[i][:0]
	}
	h.collect(s)
	if h.cfg.ActionContext {
		contextGroups(s, instruction, observation, action)
	}
	clear(dst[:h.cfg.Dim])
	nonEmpty := 0
	for _, g := range s.groups {
		if len(g) == 0 {
			continue
		}
		nonEmpty++
		w := float32(1 / math.Sqrt(float64(len(g)*h.cfg.Nonzeros)))
		for _, f := range g {
			h.addVector(f, w, dst)
		}
	}
	if nonEmpty > 1 {
		scale := float32(1 / math.Sqrt(float64(nonEmpty)))
		for i := range dst[:h.cfg.Dim] {
			dst[i] *= scale
		}
	}
}

// collect fills the feature groups from the fields' word hashes.
func (h *HashProjection) collect(s *tokenScratch) {
	g := &s.groups
	g[tagAction] = unigrams(tagAction, s.action, g[tagAction])
	g[tagActionNGram] = ngrams(tagActionNGram, s.action, h.cfg.NGram, g[tagActionNGram])
	if len(s.action) > 0 {
		g[tagActionNGram] = append(g[tagActionNGram], mix(tagActionNGram, mixAll(s.action)))
	}
	g[tagObs] = unigrams(tagObs, s.obs, g[tagObs])
	g[tagObsNGram] = ngrams(tagObsNGram, s.obs, h.cfg.NGram, g[tagObsNGram])
	g[tagInstr] = unigrams(tagInstr, s.instr, g[tagInstr])
	g[tagInstr] = ngrams(tagInstr, s.instr, h.cfg.NGram, g[tagInstr])
	matches := uint64(0)
	for _, a := range s.action {
		for _, in := range s.instr {
			g[tagCross] = append(g[tagCross], mix(mix(tagCross, a), in))
		}
		if contains(s.instr, a) {
			matches++
			g[tagMatch] = append(g[tagMatch], mix(tagMatch, a))
		}
	}
	if len(s.action) > 0 {
		verb := s.action[0]
		g[tagMatchCount] = append(g[tagMatchCount], mix(mix(tagMatchCount, verb), matches))
		for _, o := range s.obs {
			g[tagVerbObs] = append(g[tagVerbObs], mix(mix(tagVerbObs, verb), o))
		}
	}
}

// addVector adds w times the sparse ±1 vector of feature f to dst. Each
// 64-bit draw of the seeded stream gives four 16-bit lanes: the low bit is
// the sign, the other 15 pick the entry (Dim ≤ MaxFeatureDim = 2¹⁴).
func (h *HashProjection) addVector(f uint64, w float32, dst []float32) {
	state := f ^ h.cfg.Seed*0x9e3779b97f4a7c15
	dim := uint64(h.cfg.Dim)
	var r uint64
	for k := range h.cfg.Nonzeros {
		if k%4 == 0 {
			r = splitmix64(&state)
		}
		lane := r >> (16 * (k % 4)) & 0xffff
		idx := (lane >> 1) * dim >> 15
		if lane&1 == 0 {
			dst[idx] += w
		} else {
			dst[idx] -= w
		}
	}
}

func unigrams(tag uint64, words, dst []uint64) []uint64 {
	for _, w := range words {
		dst = append(dst, mix(tag, w))
	}
	return dst
}

func ngrams(tag uint64, words []uint64, maxN int, dst []uint64) []uint64 {
	for n := 2; n <= maxN; n++ {
		for i := 0; i+n <= len(words); i++ {
			dst = append(dst, mix(mix(tag, uint64(n)), mixAll(words[i:i+n])))
		}
	}
	return dst
}

func contains(words []uint64, w uint64) bool {
	for _, x := range words {
		if x == w {
			return true
		}
	}
	return false
}

// wordHashes appends the FNV-1a hash of each lower-cased ASCII letter/digit
// run of s to dst. Other bytes separate words.
func wordHashes(s string, dst []uint64) []uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h, in := uint64(offset), false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if ('a' <= c && c <= 'z') || ('0' <= c && c <= '9') || c >= 0x80 {
			h = (h ^ uint64(c)) * prime
			in = true
			continue
		}
		if in {
			dst = append(dst, h)
			h, in = offset, false
		}
	}
	if in {
		dst = append(dst, h)
	}
	return dst
}

func mixAll(ws []uint64) uint64 {
	h := uint64(len(ws))
	for _, w := range ws {
		h = mix(h, w)
	}
	return h
}

// mix combines two hashes (a splitmix64 finaliser over a ⊕ rotated b).
func mix(a, b uint64) uint64 {
	x := a ^ (b<<31 | b>>33) ^ 0x9e3779b97f4a7c15
	return finalize(x + b)
}

func finalize(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func splitmix64(state *uint64) uint64 {
	*state += 0x9e3779b97f4a7c15
	return finalize(*state)
}
