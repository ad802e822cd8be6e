package policy

import (
	"errors"
	"fmt"
	"math"
)

// Config describes a policy's architecture and initialisation. The zero
// value of every field means its default; use WithDefaults to see them.
type Config struct {
	// Buckets is the size of the hashed feature space: every word, bigram
	// and crossing lands in one of Buckets rows of the embedding table.
	// Default 16384; allowed 256..4194304.
	Buckets int
	// EmbedDim is the embedding size. Default 16; allowed 1..256.
	EmbedDim int
	// Hidden is the width of the scoring MLP and of the value head.
	// Default 32; allowed 1..1024.
	Hidden int
	// History is how many recent actions enter the n-gram features (flags
	// such as "already visited" always read the whole episode). Default 4;
	// allowed 0..64. Use NoHistory to ask for 0.
	History int
	// Temperature divides the scores before the softmax. Default 1; allowed
	// (0, 100].
	Temperature float64
	// Seed initialises the parameters. Default 1.
	Seed int64
	// InitScale is the standard deviation of the initial embeddings.
	// Default 0.3; allowed (0, 10].
	InitScale float64
}

// maxTableSize bounds the feature table (256 MiB of float64).
const maxTableSize = 1 << 25

// NoHistory is the History value that means "no history features" (0 means
// the default).
const NoHistory = -1

// Defaults of Config.
const (
	DefaultBuckets     = 1 << 14
	DefaultEmbedDim    = 16
	DefaultHidden      = 32
	DefaultHistory     = 4
	DefaultTemperature = 1.0
	DefaultSeed        = 1
	DefaultInitScale   = 0.3
)

// WithDefaults returns a copy of c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.Buckets == 0 {
		c.Buckets = DefaultBuckets
	}
	if c.EmbedDim == 0 {
		c.EmbedDim = DefaultEmbedDim
	}
	if c.Hidden == 0 {
		c.Hidden = DefaultHidden
	}
	switch c.History {
	case 0:
		c.History = DefaultHistory
	case NoHistory:
		c.History = 0
	}
	if c.Temperature == 0 {
		c.Temperature = DefaultTemperature
	}
	if c.Seed == 0 {
		c.Seed = DefaultSeed
	}
	if c.InitScale == 0 {
		c.InitScale = DefaultInitScale
	}
	return c
}

// Validate reports every invalid field of c (after defaults are applied)
// as ConfigErrors joined with errors.Join.
func (c Config) Validate() error {
	c = c.WithDefaults()
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &ConfigError{Field: field, Reason: fmt.Sprintf(format, args...)})
	}
	if c.Buckets < 256 || c.Buckets > 1<<22 {
		bad("Buckets", "%d not in 256..4194304", c.Buckets)
	}
	if c.EmbedDim < 1 || c.EmbedDim > 256 {
		bad("EmbedDim", "%d not in 1..256", c.EmbedDim)
	}
	if c.Buckets*(c.EmbedDim+2) > maxTableSize {
		bad("Buckets", "%d buckets × (%d+2) exceeds %d table entries", c.Buckets, c.EmbedDim, maxTableSize)
	}
	if c.Hidden < 1 || c.Hidden > 1024 {
		bad("Hidden", "%d not in 1..1024", c.Hidden)
	}
	if c.History < 0 || c.History > 64 {
		bad("History", "%d not in 0..64 (use NoHistory for none)", c.History)
	}
	if !(c.Temperature > 0 && c.Temperature <= 100) || math.IsNaN(c.Temperature) {
		bad("Temperature", "%v not in (0, 100]", c.Temperature)
	}
	if !(c.InitScale > 0 && c.InitScale <= 10) {
		bad("InitScale", "%v not in (0, 10]", c.InitScale)
	}
	return errors.Join(errs...)
}
