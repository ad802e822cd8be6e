package policy

import "fmt"

// Distribution returns the policy's distribution over s.Admissible. It
// returns ErrNoActions for an empty admissible list.
func (p *Policy) Distribution(s *State) (probs, logProbs []float64, err error) {
	f, err := p.NewFeaturizer().Features(s)
	if err != nil {
		return nil, nil, err
	}
	var ps Pass
	p.Forward(f, &ps)
	return ps.Probs, ps.LogProbs, nil
}

// Sample draws an action index from the policy's distribution over s's
// admissible actions and returns it with its log-probability.
func (p *Policy) Sample(s *State, rng Rand) (idx int, logProb float64, err error) {
	probs, lp, err := p.Distribution(s)
	if err != nil {
		return 0, 0, err
	}
	idx = SampleIndex(probs, rng)
	return idx, lp[idx], nil
}

// Value returns the value head's estimate for s.
func (p *Policy) Value(s *State) (float64, error) {
	f, err := p.NewFeaturizer().Features(s)
	if err != nil {
		return 0, err
	}
	var ps Pass
	p.Forward(f, &ps)
	return ps.Value, nil
}

// WithTemperature returns a view of p that shares its parameters (so it
// sees every later update) but samples at temperature t. It returns a
// ConfigError for t outside (0, 100].
func (p *Policy) WithTemperature(t float64) (*Policy, error) {
	if !(t > 0) {
		return nil, &ConfigError{Field: "Temperature", Reason: fmt.Sprintf("%v not in (0, 100]", t)}
	}
	c := p.cfg
	c.Temperature = t
	if err := c.Validate(); err != nil {
		return nil, err
	}
	v := *p
	v.cfg = c
	return &v, nil
}
