package policy

import (
	"math"
	"math/rand/v2"
	"sync/atomic"
)

// Policy is the trainable agent. Reading methods (Distribution, Sample,
// Forward, Value) are safe for concurrent use; Adam.Step and SetVersion
// mutate it and must not run concurrently with anything else.
type Policy struct {
	cfg     Config
	lay     layout
	version int64
	params  []float64
	// touched holds the bucket rows that may differ from their initial
	// values; snapshots store only these.
	touched *rowSet
	// gen names the current values of params, unique across all policies:
	// every write to params takes a new one, so a Pass may keep values
	// computed from the parameters for as long as gen is unchanged. It is
	// shared, like params, by the views of WithTemperature.
	gen *uint64
}

// lastGen hands out parameter generations.
var lastGen atomic.Uint64

func newGen() uint64 { return lastGen.Add(1) }

// changed records that p's parameters were written.
func (p *Policy) changed() { *p.gen = newGen() }

// New returns a fresh policy: exactly uniform over any admissible set, with
// a zero value head. It returns ConfigErrors (matching ErrConfig) for an
// invalid configuration.
func New(cfg Config) (*Policy, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	lay := newLayout(cfg)
	p := &Policy{cfg: cfg, lay: lay, params: make([]float64, lay.total), touched: newRowSetPtr(cfg.Buckets), gen: new(uint64)}
	initParams(cfg, lay, p.params)
	p.changed()
	return p, nil
}

// initParams fills params with the deterministic initialisation of cfg:
// Gaussian embeddings, Gaussian first layers, and zero output weights so
// that every action scores 0.
func initParams(cfg Config, lay layout, params []float64) {
	clear(params)
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eed0f9011c7))
	for r := range int32(lay.buckets) {
		e := params[lay.emb(r) : lay.emb(r)+lay.d]
		for i := range e {
			e[i] = rng.NormFloat64() * cfg.InitScale
		}
	}
	gauss(rng, params[lay.w1:lay.w1+lay.h*lay.in], 1/math.Sqrt(float64(lay.in)))
	gauss(rng, params[lay.wv:lay.wv+lay.h*lay.d], 1/(cfg.InitScale*math.Sqrt(float64(lay.d))))
	for i, v := range params {
		params[i] = round32(v)
	}
}

// round32 rounds v to the nearest float32. Parameters are kept
// float32-representable (at initialisation and after every optimiser step)
// so that snapshots store 4 bytes a value and still round-trip exactly; the
// arithmetic stays float64.
func round32(v float64) float64 { return float64(float32(v)) }

func gauss(rng *rand.Rand, v []float64, sd float64) {
	for i := range v {
		v[i] = rng.NormFloat64() * sd
	}
}

// Config returns the policy's configuration with defaults filled in.
func (p *Policy) Config() Config { return p.cfg }

// Version is the policy version (the learner's update count).
func (p *Policy) Version() int64 { return p.version }

// SetVersion sets the policy version.
func (p *Policy) SetVersion(v int64) { p.version = v }

// Temperature is the softmax temperature.
func (p *Policy) Temperature() float64 { return p.cfg.Temperature }

// NumParams is the number of parameters.
func (p *Policy) NumParams() int { return len(p.params) }

// Clone returns an independent copy (one memory copy of the parameters).
func (p *Policy) Clone() *Policy {
	c := *p
	c.params = append([]float64(nil), p.params...)
	t := p.touched.clone()
	c.touched = &t
	c.gen = new(uint64)
	c.changed()
	return &c
}

// SameShape reports whether q has p's architecture and features (Buckets,
// EmbedDim, Hidden, History): its parameters and gradients line up with
// p's and it reads the same Features.
func (p *Policy) SameShape(q *Policy) bool {
	a, b := p.cfg, q.cfg
	return a.Buckets == b.Buckets && a.EmbedDim == b.EmbedDim && a.Hidden == b.Hidden && a.History == b.History
}

// CopyFrom overwrites p's parameters, configuration and version with src's
// without allocating. It returns ErrShape unless p.SameShape(src).
func (p *Policy) CopyFrom(src *Policy) error {
	if !p.SameShape(src) {
		return ErrShape
	}
	p.cfg = src.cfg
	copy(p.params, src.params)
	p.touched.clear()
	for _, r := range src.touched.list {
		p.touched.add(r)
	}
	p.version = src.version
	p.changed()
	return nil
}

// Param returns parameter i of the flat parameter vector (for gradient
// checks and diagnostics; 0 ≤ i < NumParams).
func (p *Policy) Param(i int) float64 { return p.params[i] }

// SetParam sets parameter i of the flat parameter vector, keeping the
// snapshot bookkeeping right (for gradient checks and diagnostics). The
// value is not rounded: a snapshot stores it to float32 precision.
func (p *Policy) SetParam(i int, v float64) {
	if i < p.lay.sparse {
		p.touched.add(int32(i / p.lay.row))
	}
	p.params[i] = v
	p.changed()
}
