package policy

import (
	"errors"
	"fmt"
	"math"
)

// AdamConfig holds Adam's hyper-parameters; zero fields take the defaults.
type AdamConfig struct {
	// LR is the learning rate. Default 0.01.
	LR float64
	// Beta1 and Beta2 are the moment decay rates. Defaults 0.9 and 0.999.
	Beta1, Beta2 float64
	// Eps is added to the denominator. Default 1e-8.
	Eps float64
}

func (c AdamConfig) withDefaults() AdamConfig {
	if c.LR == 0 {
		c.LR = 0.01
	}
	if c.Beta1 == 0 {
		c.Beta1 = 0.9
	}
	if c.Beta2 == 0 {
		c.Beta2 = 0.999
	}
	if c.Eps == 0 {
		c.Eps = 1e-8
	}
	return c
}

func (c AdamConfig) validate() error {
	var errs []error
	if !(c.LR > 0 && c.LR < 10) {
		errs = append(errs, &ConfigError{Field: "LR", Reason: fmt.Sprintf("%v not in (0, 10)", c.LR)})
	}
	if !(c.Beta1 >= 0 && c.Beta1 < 1) || !(c.Beta2 >= 0 && c.Beta2 < 1) {
		errs = append(errs, &ConfigError{Field: "Beta1/Beta2", Reason: fmt.Sprintf("%v, %v not in [0, 1)", c.Beta1, c.Beta2)})
	}
	if !(c.Eps > 0) {
		errs = append(errs, &ConfigError{Field: "Eps", Reason: fmt.Sprintf("%v not positive", c.Eps)})
	}
	return errors.Join(errs...)
}

// Adam is the Adam optimiser for one policy's parameters. Rows of the
// feature table that never received a gradient keep zero moments and are
// skipped, which is exactly what dense Adam would do with them.
type Adam struct {
	cfg  AdamConfig
	lay  layout
	m, v []float64
	t    int
	rows rowSet // rows with non-zero moments
}

// NewAdam returns an optimiser for policies shaped like p. It returns
// ConfigErrors for invalid hyper-parameters.
func NewAdam(p *Policy, cfg AdamConfig) (*Adam, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	n := p.lay.total
	return &Adam{cfg: cfg, lay: p.lay, m: make([]float64, n), v: make([]float64, n), rows: newRowSet(p.lay.buckets)}, nil
}

// SetLR changes the learning rate (for schedules).
func (o *Adam) SetLR(lr float64) { o.cfg.LR = lr }

// Steps is the number of steps taken.
func (o *Adam) Steps() int { return o.t }

// Step applies one Adam update to p with gradient g (of the loss to
// minimise). It returns ErrShape if p or g has another configuration.
func (o *Adam) Step(p *Policy, g *Grads) error {
	if p.lay != o.lay || g.lay != o.lay {
		return ErrShape
	}
	for _, r := range g.rows.list {
		o.rows.add(r)
		p.touched.add(r)
	}
	o.t++
	c := o.cfg
	lr := c.LR * math.Sqrt(1-math.Pow(c.Beta2, float64(o.t))) / (1 - math.Pow(c.Beta1, float64(o.t)))
	l := &o.lay
	for _, r := range o.rows.list {
		o.update(p.params, g.data, l.emb(r), l.emb(r)+l.row, lr)
	}
	o.update(p.params, g.data, l.sparse, l.total, lr)
	p.changed()
	return nil
}

func (o *Adam) update(params, grad []float64, from, to int, lr float64) {
	c := o.cfg
	m, v, gr, w := o.m[from:to], o.v[from:to], grad[from:to], params[from:to]
	for i, gi := range gr {
		m[i] = c.Beta1*m[i] + (1-c.Beta1)*gi
		v[i] = c.Beta2*v[i] + (1-c.Beta2)*gi*gi
		w[i] = round32(w[i] - lr*m[i]/(math.Sqrt(v[i])+c.Eps))
	}
}
