package learner

import (
	"fmt"
	"math/rand/v2"

	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
)

// Trainer applies updates to one policy. It is not safe for concurrent use.
type Trainer struct {
	cfg     Config
	pol     *policy.Policy
	ref     *policy.Policy
	opt     *policy.Adam
	grads   *policy.Grads
	work    []*worker
	src     *rand.PCG
	rng     *rand.Rand
	updates int64
}

// New returns a trainer that updates p in place. The reference policy of
// the KL term is a copy of p as it is now (see SetReference). It returns
// ConfigErrors (matching ErrConfig) for an invalid configuration.
func New(p *policy.Policy, cfg Config) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	opt, err := policy.NewAdam(p, policy.AdamConfig{LR: cfg.LR})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	src := rand.NewPCG(uint64(cfg.Seed), 0x7261696e)
	return &Trainer{
		cfg: cfg, pol: p, ref: p.Clone(), opt: opt, grads: p.NewGrads(), work: newWorkers(p, cfg.Workers),
		src: src, rng: rand.New(src),
	}, nil
}

// Config returns the configuration with defaults filled in.
func (t *Trainer) Config() Config { return t.cfg }

// Policy returns the policy being trained (shared, not a copy).
func (t *Trainer) Policy() *policy.Policy { return t.pol }

// Reference returns π_ref of the KL term.
func (t *Trainer) Reference() *policy.Policy { return t.ref }

// SetReference replaces π_ref with a copy of ref, which must have the
// trained policy's shape (else policy.ErrShape).
func (t *Trainer) SetReference(ref *policy.Policy) error {
	if !t.pol.SameShape(ref) {
		return policy.ErrShape
	}
	t.ref = ref.Clone()
	return nil
}

// SetLR changes Adam's learning rate (for schedules).
func (t *Trainer) SetLR(lr float64) { t.opt.SetLR(lr) }

// SetAlpha sets α, the weight of the off-policy term (eq. 1), for the
// updates that follow: an adaptive share in place of Config.Alpha, e.g.
// scaled by how many buffer records an update uses. It must be in (0, 1).
func (t *Trainer) SetAlpha(a float64) error {
	if !(a > 0 && a < 1) {
		return fmt.Errorf("%w: alpha %v not in (0, 1)", ErrConfig, a)
	}
	t.cfg.Alpha = a
	return nil
}

// Updates is the number of updates applied.
func (t *Trainer) Updates() int64 { return t.updates }

// Update applies one update from a batch: on-policy trajectories grouped by
// GroupID, and optional off-policy (buffer) trajectories, each of which is
// normalised with the on-policy group of its TaskID (or by the configured
// fallback). It increments the policy's version. A bad trajectory returns a
// BatchError (matching ErrBatch) and leaves the policy unchanged.
//
// π_old of an on-policy step is its recorded behaviour log-prob, so the
// first epoch's ratio is exactly 1 when the actor ran this policy version
// at the policy's temperature; rollouts at another version or temperature
// show up as ratios away from 1 (and are clipped accordingly).
//
// Update is Assemble followed by Apply: the one code path of every update,
// whether the trainer that applies the batch is this one or another.
func (t *Trainer) Update(onPolicy, offPolicy []*schemas.Trajectory) (UpdateStats, error) {
	b, err := t.Assemble(onPolicy, offPolicy)
	if err != nil {
		return UpdateStats{}, err
	}
	return t.Apply(b)
}

// Assemble prepares an update's batch without applying it: it validates and
// featurises every trajectory, forms the normalisation groups and — for
// every algorithm but PPO, whose advantages need V_old — assigns the
// advantages and the swap term's coefficients. Nothing of it needs π_θ's
// weights, so the batch can be applied by a trainer that holds them
// elsewhere (Batch.Export). The policy is not changed. A bad trajectory
// returns a BatchError (matching ErrBatch). A trajectory the built-in policy
// cannot read (no admissible list, an action not among them: an LLM
// policy's) is assembled for export; Apply refuses it.
func (t *Trainer) Assemble(onPolicy, offPolicy []*schemas.Trajectory) (*Batch, error) {
	if len(onPolicy)+len(offPolicy) == 0 {
		return nil, &BatchError{Reason: "empty batch"}
	}
	samples, err := t.prepare(onPolicy, offPolicy)
	if err != nil {
		return nil, err
	}
	if t.cfg.Swap.Weight > 0 && t.cfg.Swap.Partners == PartnersKNN {
		if err := firstFeatErr(samples); err != nil { // partners are chosen by state similarity
			return nil, err
		}
	}
	b := &Batch{cfg: t.cfg, update: t.updates + 1, samples: samples, groups: groupSamples(samples)}
	if t.cfg.Algo != PPO {
		t.advantage(b)
	}
	return b, nil
}

// advantage assigns b's advantages and swap coefficients.
func (t *Trainer) advantage(b *Batch) {
	t.assignAdvantages(b.samples, b.groups)
	b.swapPairs = t.assignSwap(b.samples)
	b.advantaged = true
	b.rng, _ = t.src.MarshalBinary() // a PCG always marshals
}

// Apply applies a batch made by Assemble (or Import): the pass of π_ref
// and of π_old where needed (log π_old of off-policy steps, V_old for
// PPO, whose advantages are assigned then), the epochs of optimisation
// with the batch's advantages, and the policy's next version. A batch is
// applied once; applying it again, or a batch assembled for another
// objective, returns a BatchError and leaves the policy unchanged.
func (t *Trainer) Apply(b *Batch) (UpdateStats, error) {
	if err := t.checkBatch(b); err != nil {
		return UpdateStats{}, err
	}
	b.applied = true
	t.oldPass(b.samples)
	if !b.advantaged {
		t.advantage(b)
	}
	if b.rng != nil { // the assembler's source: a no-op for a batch this trainer assembled
		_ = t.src.UnmarshalBinary(b.rng) // checked by Import
	}
	st := t.optimize(b.samples)
	t.batchStats(&st, b.samples, b.groups)
	st.SwapPairs = float64(b.swapPairs)
	t.updates++
	t.pol.SetVersion(t.pol.Version() + 1)
	st.Update, st.PolicyVersion = t.updates, t.pol.Version()
	return st, nil
}

// prepare validates and featurises every trajectory; the first bad one
// (in batch order) is reported.
func (t *Trainer) prepare(on, off []*schemas.Trajectory) ([]*sample, error) {
	all := append(append(make([]*schemas.Trajectory, 0, len(on)+len(off)), on...), off...)
	samples := make([]*sample, len(all))
	errs := make([]error, len(all))
	t.eachSample(len(all), func(w, i int) {
		samples[i], errs[i] = newSample(all[i], i >= len(on), t.cfg.Rewards, t.work[w].fz)
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return samples, nil
}

// oldPass runs the reference over every step for log π_ref, and the policy
// as it is before the update (π_old) where needed: V_old for PPO, log π_old
// for off-policy steps, log π_prox for stale on-policy steps (Decoupled).
func (t *Trainer) oldPass(samples []*sample) {
	t.eachSample(len(samples), func(w, k int) { t.oldPassOne(samples[k], t.work[w]) })
}

func (t *Trainer) oldPassOne(s *sample, wk *worker) {
	ps, rs := &wk.ps, &wk.rs
	n := len(s.feats)
	s.values, s.refLogP = make([]float64, n), make([][]float64, n)
	actions := 0
	for _, f := range s.feats {
		actions += f.NumActions()
	}
	ref := make([]float64, 0, actions) // one allocation for every step's log π_ref
	if s.off {
		s.oldLogP = make([]float64, n)
	}
	s.stale, s.proxLogP = t.stale(s), nil
	if s.stale && !t.onePass() {
		s.proxLogP = make([]float64, n)
	}
	full := s.off || t.cfg.Algo == PPO // V_old is needed, or log π_old of an off-policy step
	for i, f := range s.feats {
		switch {
		case full:
			t.pol.Forward(f, ps)
			s.values[i] = ps.Value
		case s.proxLogP != nil:
			t.pol.ForwardActions(f, ps) // only log π_prox
		}
		a := s.t.Steps[i].ActionIndex
		if s.off {
			s.oldLogP[i] = ps.LogProbs[a]
		}
		if s.proxLogP != nil {
			s.proxLogP[i] = ps.LogProbs[a]
		}
		t.ref.ForwardActions(f, rs) // π_ref's value is never used
		ref = append(ref, rs.LogProbs...)
		s.refLogP[i] = ref[len(ref)-len(rs.LogProbs) : len(ref) : len(ref)]
	}
}

// stale reports whether s is an on-policy sample that Config.Decoupled
// corrects: one that an older policy version than the trained one played.
func (t *Trainer) stale(s *sample) bool {
	return t.cfg.Decoupled && !s.off && s.t.PolicyVersion < t.pol.Version()
}

// onePass reports whether an update is one optimiser step over the whole
// batch, so the policy its forward passes see is π_old (and π_prox).
func (t *Trainer) onePass() bool { return t.cfg.Epochs == 1 && t.cfg.MiniBatches == 1 }
