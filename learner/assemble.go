package learner

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
)

// ErrNotPortable means a batch cannot be carried to another trainer: PPO's
// advantages need V_old from the critic, which lives with π_θ's weights.
var ErrNotPortable = errors.New("learner: batch cannot be exported")

// Batch is one update's data as Assemble (or Import) prepared it: the
// featurised trajectories, their normalisation groups and, for every
// algorithm but PPO, their advantages and swap coefficients. Apply applies
// it once. A Batch is not safe for concurrent use.
//
// What a Batch does not hold is what needs π_θ's weights, which the
// applying trainer computes: log π_old of off-policy steps (on-policy
// steps use their behaviour log-prob), log π_ref(·|s) for the KL term,
// and PPO's V_old with the advantages that follow from it.
type Batch struct {
	cfg        Config
	update     int64
	samples    []*sample
	groups     []*group
	advantaged bool
	swapPairs  int
	applied    bool
	// rng is the assembling trainer's random source after the swap term's
	// draws: Apply shuffles minibatches from it, so a batch applied
	// elsewhere draws what the assembling trainer would have.
	rng []byte
}

// Update is the number of the update the batch makes (1 for the first).
func (b *Batch) Update() int64 { return b.update }

// Trajectories returns the numbers of on- and off-policy trajectories.
func (b *Batch) Trajectories() (on, off int) {
	for _, s := range b.samples {
		if s.off {
			off++
		} else {
			on++
		}
	}
	return on, off
}

// Stats returns the figures that describe the batch itself (sizes,
// advantages, returns, success, group fractions, swap pairs) for a batch
// whose advantages are assigned; the optimisation figures stay 0.
func (b *Batch) Stats() UpdateStats {
	var st UpdateStats
	if b.advantaged {
		(&Trainer{cfg: b.cfg}).batchStats(&st, b.samples, b.groups)
		st.SwapPairs = float64(b.swapPairs)
	}
	st.Update = b.update
	return st
}

// SetUpdates sets the number of updates the trainer counts as made, for a
// trainer that assembles batches another trainer applies: it keeps the
// swap term's ramp (SwapConfig.RampUpdates) in step with the updates made
// elsewhere. Apply counts its own.
func (t *Trainer) SetUpdates(n int64) { t.updates = max(n, 0) }

// checkBatch reports why t cannot apply b, if it cannot.
func (t *Trainer) checkBatch(b *Batch) error {
	switch {
	case b == nil:
		return fmt.Errorf("%w: no batch", ErrBatch)
	case b.applied:
		return fmt.Errorf("%w: batch of update %d already applied", ErrBatch, b.update)
	case objectiveOf(b.cfg) != objectiveOf(t.cfg):
		return fmt.Errorf("%w: batch assembled for objective %+v, the trainer optimises %+v", ErrBatch, objectiveOf(b.cfg), objectiveOf(t.cfg))
	}
	return firstFeatErr(b.samples)
}

// objective is the part of a Config a batch's advantages and loss depend on.
type objective struct {
	Algo                            Algo
	Rewards                         RewardSource
	Alpha, EpsOn, EpsOff, Beta, Ent float64
	OffRatio                        OffRatio
	Decoupled                       bool
}

func objectiveOf(c Config) objective {
	return objective{Algo: c.Algo, Rewards: c.Rewards, Alpha: c.Alpha, EpsOn: c.EpsOn, EpsOff: c.EpsOff,
		Beta: c.Beta, Ent: c.EntropyCoef, OffRatio: c.OffRatio, Decoupled: c.Decoupled}
}

// stepWeights are the per-step weights of the on- and off-policy terms over
// the whole batch: accumulate's weights with one minibatch.
func stepWeights(samples []*sample, alpha float64) (wOn, wOff float64) {
	var nOn, nOff int
	for _, s := range samples {
		if s.off {
			nOff += len(s.t.Steps)
		} else {
			nOn += len(s.t.Steps)
		}
	}
	wOn, wOff = 1/float64(max(nOn, 1)), 1/float64(max(nOff, 1))
	if nOn > 0 && nOff > 0 {
		wOn *= 1 - alpha
		wOff *= alpha
	}
	if nOn == 0 {
		wOn = 0
	}
	if nOff == 0 {
		wOff = 0
	}
	return wOn, wOff
}

// Export returns the batch in its wire form for a trainer elsewhere: run
// names the run and version the π_θ version the batch was assembled
// against. A PPO batch returns ErrNotPortable (its advantages need the
// critic); GRPO and GiGPO batches carry everything.
func (b *Batch) Export(run string, version int64) (*schemas.TrainBatch, error) {
	if !b.advantaged {
		return nil, fmt.Errorf("%w: %s advantages need V_old from the critic beside π_θ's weights; an external trainer runs grpo or gigpo", ErrNotPortable, b.cfg.Algo)
	}
	cfg, err := json.Marshal(b.cfg.Portable())
	if err != nil {
		return nil, fmt.Errorf("learner: trainer settings: %w", err)
	}
	wOn, wOff := stepWeights(b.samples, b.cfg.Alpha)
	w := &schemas.TrainBatch{Run: run, Update: b.update, PolicyVersion: version, Trainer: cfg, TrainerRNG: b.rng,
		Loss: schemas.BatchLoss{Algo: string(b.cfg.Algo), EpsOn: b.cfg.EpsOn, EpsOff: b.cfg.EpsOff,
			OffRatio: string(b.cfg.OffRatio), Beta: b.cfg.Beta, EntropyCoef: b.cfg.EntropyCoef, Alpha: b.cfg.Alpha,
			WeightOn: wOn, WeightOff: wOff}}
	for _, s := range b.samples {
		weight := wOn
		if s.off {
			weight = wOff
		}
		for j := range s.t.Steps {
			st := &s.t.Steps[j]
			row := schemas.BatchStep{TrajectoryID: s.t.ID, Step: int32(j), TaskID: s.t.TaskID, GroupID: s.t.GroupID,
				NormGroup: int32(s.group), OffPolicy: s.off, GeneratingVersion: s.t.PolicyVersion,
				Instruction: s.t.Instruction, Observation: st.Observation, Admissible: st.Admissible, Action: st.Action,
				ActionIndex: st.ActionIndex, TokenIDs: st.TokenIDs, TokenLogProbs: st.TokenLogProbs,
				BehaviorLogProb: s.behLogP[j], Reward: s.rewards[j], Advantage: s.adv[j], Weight: weight,
				OutcomeReward: s.t.OutcomeReward, Success: s.t.Success}
			if s.swap != nil {
				row.SwapCoef = s.swap[j]
			}
			w.Steps = append(w.Steps, row)
		}
	}
	if err := w.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotPortable, err)
	}
	return w, nil
}

// Import rebuilds a batch Export wrote, for t to Apply: the trajectories
// are featurised again with t's policy, and the advantages, swap
// coefficients and random source (minibatch shuffles) are the wire's, bit
// for bit. The batch must have been
// assembled for t's objective and against t's policy version. Errors match
// ErrBatch.
func (t *Trainer) Import(w *schemas.TrainBatch) (*Batch, error) {
	if err := w.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBatch, err)
	}
	if err := t.checkLoss(w.Loss); err != nil {
		return nil, err
	}
	if w.PolicyVersion != t.pol.Version() {
		return nil, fmt.Errorf("%w: batch of update %d starts from policy version %d, the trainer holds %d", ErrBatch, w.Update, w.PolicyVersion, t.pol.Version())
	}
	trajs, rows := splitRows(w)
	samples := make([]*sample, len(trajs))
	errs := make([]error, len(trajs))
	t.eachSample(len(trajs), func(wk, i int) {
		samples[i], errs[i] = importSample(trajs[i], rows[i], t.work[wk].fz)
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	groups, err := importGroups(samples)
	if err != nil {
		return nil, err
	}
	if len(w.TrainerRNG) > 0 {
		if err := new(rand.PCG).UnmarshalBinary(w.TrainerRNG); err != nil {
			return nil, fmt.Errorf("%w: trainer random source: %w", ErrBatch, err)
		}
	}
	return &Batch{cfg: t.cfg, update: w.Update, samples: samples, groups: groups, advantaged: true, rng: w.TrainerRNG}, nil
}

// checkLoss reports a wire loss that is not t's objective.
func (t *Trainer) checkLoss(l schemas.BatchLoss) error {
	c := t.cfg
	want := schemas.BatchLoss{Algo: string(c.Algo), EpsOn: c.EpsOn, EpsOff: c.EpsOff, OffRatio: string(c.OffRatio),
		Beta: c.Beta, EntropyCoef: c.EntropyCoef, Alpha: c.Alpha, WeightOn: l.WeightOn, WeightOff: l.WeightOff}
	if l != want {
		return fmt.Errorf("%w: batch loss %+v, the trainer optimises %+v", ErrBatch, l, want)
	}
	return nil
}

// splitRows cuts the rows into trajectories (a new one at every step 0).
func splitRows(w *schemas.TrainBatch) ([]*schemas.Trajectory, [][]schemas.BatchStep) {
	var trajs []*schemas.Trajectory
	var rows [][]schemas.BatchStep
	for i := range w.Steps {
		r := &w.Steps[i]
		if r.Step == 0 {
			trajs = append(trajs, &schemas.Trajectory{ID: r.TrajectoryID, Run: w.Run, TaskID: r.TaskID, GroupID: r.GroupID,
				PolicyVersion: r.GeneratingVersion, Instruction: r.Instruction, OutcomeReward: r.OutcomeReward, Success: r.Success})
			rows = append(rows, nil)
		}
		k := len(trajs) - 1
		trajs[k].Steps = append(trajs[k].Steps, schemas.Step{Observation: r.Observation, Admissible: r.Admissible,
			NumAdmissible: int32(len(r.Admissible)), Action: r.Action, ActionIndex: r.ActionIndex,
			BehaviorLogProb: r.BehaviorLogProb, Reward: r.Reward, TokenIDs: r.TokenIDs, TokenLogProbs: r.TokenLogProbs})
		rows[k] = append(rows[k], *r)
	}
	return trajs, rows
}

// importSample featurises one wire trajectory and takes its labels.
func importSample(t *schemas.Trajectory, rows []schemas.BatchStep, fz *policy.Featurizer) (*sample, error) {
	off := rows[0].OffPolicy
	fail := func(reason string, err error) error {
		return &BatchError{ID: t.ID, OffPolicy: off, Reason: reason, Err: err}
	}
	states, err := policy.StatesFromTrajectory(t)
	if err != nil {
		return nil, fail("cannot rebuild states", err)
	}
	feats, err := fz.Episode(states)
	if err != nil {
		return nil, fail("cannot featurise", err)
	}
	n := len(rows)
	s := &sample{t: t, off: off, group: int(rows[0].NormGroup), feats: feats, rewards: make([]float64, n),
		behLogP: make([]float64, n), adv: make([]float64, n)}
	if !off {
		s.swap = make([]float64, n)
	}
	for j, r := range rows {
		s.rewards[j], s.behLogP[j], s.adv[j] = r.Reward, min(r.BehaviorLogProb, 0), r.Advantage
		s.ret += r.Reward
		if !off {
			s.swap[j] = r.SwapCoef
		} else if r.SwapCoef != 0 {
			return nil, fail(fmt.Sprintf("step %d: swap coefficient %v on an off-policy step (the swap term is on-policy only)", j, r.SwapCoef), nil)
		}
	}
	s.oldLogP = s.behLogP
	return s, nil
}

// importGroups rebuilds the normalisation groups from the samples' indices,
// which must number the groups 0, 1, ... in order of first use.
func importGroups(samples []*sample) ([]*group, error) {
	var groups []*group
	for i, s := range samples {
		switch {
		case s.group == len(groups):
			groups = append(groups, &group{})
		case s.group > len(groups):
			return nil, fmt.Errorf("%w: trajectory %d is in normalisation group %d before group %d has a member", ErrBatch, i, s.group, len(groups))
		}
		g := groups[s.group]
		g.members = append(g.members, i)
		g.hasOn = g.hasOn || !s.off
	}
	return groups, nil
}

// firstFeatErr is the reason the first unfeaturised sample cannot be
// applied by the built-in policy, or nil.
func firstFeatErr(samples []*sample) error {
	for _, s := range samples {
		if s.featErr != nil {
			return s.featErr
		}
	}
	return nil
}
