package prm

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"
)

// Featurizer is the frozen feature map h_t of one step. Implementations must
// be deterministic and safe for concurrent use.
type Featurizer interface {
	// Dim is the length of the feature vector.
	Dim() int
	// Features writes h_t for the step into dst, which has length Dim().
	// It overwrites every entry of dst.
	Features(instruction, observation, action string, dst []float32)
}

// FeaturizerSpec names a featurizer and its parameters; it is what a
// snapshot stores so the same frozen featurizer can be rebuilt on load.
type FeaturizerSpec struct {
	// Name is the registered name, e.g. "hash-projection".
	Name string `json:"name"`
	// Params is the featurizer's own JSON configuration.
	Params json.RawMessage `json:"params"`
}

// SpecFeaturizer is a Featurizer that can describe itself, so that a model
// using it can be snapshotted.
type SpecFeaturizer interface {
	Featurizer
	// Spec returns the description NewFeaturizer rebuilds it from.
	Spec() FeaturizerSpec
}

// FeaturizerFactory rebuilds a featurizer from its JSON parameters.
type FeaturizerFactory func(params json.RawMessage) (Featurizer, error)

var (
	featurizersMu sync.RWMutex
	featurizers   = map[string]FeaturizerFactory{}
)

// RegisterFeaturizer makes a featurizer loadable from snapshots by name. It
// panics on a duplicate name (a programming error caught at init).
func RegisterFeaturizer(name string, f FeaturizerFactory) {
	featurizersMu.Lock()
	defer featurizersMu.Unlock()
	if _, dup := featurizers[name]; dup {
		panic("prm: duplicate featurizer registration of " + name)
	}
	featurizers[name] = f
}

// NewFeaturizer rebuilds a featurizer from its spec. An unregistered name
// returns an error wrapping ErrUnknownFeaturizer.
func NewFeaturizer(spec FeaturizerSpec) (Featurizer, error) {
	featurizersMu.RLock()
	f, ok := featurizers[spec.Name]
	featurizersMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %v)", ErrUnknownFeaturizer, spec.Name, featurizerNames())
	}
	return f(spec.Params)
}

func featurizerNames() []string {
	featurizersMu.RLock()
	defer featurizersMu.RUnlock()
	names := make([]string, 0, len(featurizers))
	for n := range featurizers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
