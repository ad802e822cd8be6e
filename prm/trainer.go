package prm

import (
	"context"
	"math"
	"math/rand/v2"
)

// trainer holds the state of one Train call.
type trainer struct {
	m                 *Model
	ds                *dataset
	cfg               TrainConfig
	trainIdx, heldIdx []int
	// stopIdx are the held-out trajectories whose loss stops training
	// (see TrainConfig.FailuresPerSuccess); order is the epoch in hand.
	stopIdx, order []int
	// trainSucc and trainFail split trainIdx when epochs draw failures
	// (both nil when every epoch trains on all of trainIdx).
	trainSucc, trainFail []int
	weight               []float64 // per trajectory, train and held-out weighted per split
	opt                  *adam
	grad                 []float64

	// Minibatch scratch: each distinct row of a batch gets a slot.
	slotOf    []int32 // row → slot, -1 when unused
	slotRows  []int32
	slotR     []float64
	slotHid   []float64
	slotGrad  []float64
	slotX     []float64 // the slots' feature rows, float64
	bestParam []float64
	bestLoss  float64
	epochs    int
	bestEpoch int
}

func newTrainer(m *Model, ds *dataset, cfg TrainConfig, trainIdx, heldIdx []int) *trainer {
	t := &trainer{m: m, ds: ds, cfg: cfg, trainIdx: trainIdx, heldIdx: heldIdx,
		weight: make([]float64, len(ds.outcome)), opt: newAdam(len(m.params), cfg.LearningRate, cfg.WeightDecay),
		grad: make([]float64, len(m.params)), slotOf: make([]int32, ds.numRows()), bestLoss: math.Inf(1)}
	for i := range t.slotOf {
		t.slotOf[i] = -1
	}
	t.order = append(t.order, trainIdx...)
	if succ, fail := t.split(trainIdx); len(fail) > t.failureCap(len(succ)) {
		t.trainSucc, t.trainFail = succ, fail
	}
	return t
}

// split returns idx's successes and failures when failures are drawn (the
// balanced loss and a split with both classes), else nil.
func (t *trainer) split(idx []int) (succ, fail []int) {
	if t.cfg.Weighting != WeightBalanced || t.cfg.FailuresPerSuccess < 0 {
		return nil, nil
	}
	for _, i := range idx {
		if t.ds.success[i] {
			succ = append(succ, i)
		} else {
			fail = append(fail, i)
		}
	}
	if len(succ) == 0 {
		return nil, nil
	}
	return succ, fail
}

// failureCap is how many failures an epoch with ns successes trains on.
func (t *trainer) failureCap(ns int) int {
	return max(t.cfg.FailuresPerSuccess*ns, 2*t.cfg.BatchSize)
}

// setWeights gives the members of idx their class weights within idx.
func (t *trainer) setWeights(idx []int) {
	ws, wf := classWeights(t.ds.success, idx, t.cfg.Weighting)
	for _, i := range idx {
		t.weight[i] = wf
		if t.ds.success[i] {
			t.weight[i] = ws
		}
	}
}

// stopSet draws the held-out trajectories of the stopping loss, once: every
// success and at most failureCap failures.
func (t *trainer) stopSet(rng *rand.Rand) []int {
	succ, fail := t.split(t.heldIdx)
	if n := t.failureCap(len(succ)); len(fail) > n {
		rng.Shuffle(len(fail), func(a, b int) { fail[a], fail[b] = fail[b], fail[a] })
		return append(succ, fail[:n]...)
	}
	return t.heldIdx
}

// nextEpoch shuffles the next epoch's trajectories into t.order: all of
// trainIdx, or its successes and a fresh draw of failures.
func (t *trainer) nextEpoch(rng *rand.Rand) {
	order := t.order
	if t.trainFail != nil {
		fail := t.trainFail
		rng.Shuffle(len(fail), func(a, b int) { fail[a], fail[b] = fail[b], fail[a] })
		order = append(append(order[:0], t.trainSucc...), fail[:t.failureCap(len(t.trainSucc))]...)
	}
	rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
	t.order = order
	t.setWeights(order)
}

// fit runs epochs of minibatch Adam until MaxEpochs or Patience epochs
// without a held-out improvement, then restores the best weights.
func (t *trainer) fit(ctx context.Context, rng *rand.Rand) error {
	t.stopIdx = t.stopSet(rng)
	t.setWeights(t.stopIdx)
	for epoch := 1; epoch <= t.cfg.MaxEpochs; epoch++ {
		t.nextEpoch(rng)
		order := t.order
		for lo := 0; lo < len(order); lo += t.cfg.BatchSize {
			if err := ctx.Err(); err != nil {
				return err
			}
			t.step(order[lo:min(lo+t.cfg.BatchSize, len(order))])
		}
		t.epochs = epoch
		loss := t.weightedLoss(t.stopIdx)
		if loss < t.bestLoss {
			t.bestLoss, t.bestEpoch = loss, epoch
			t.bestParam = append(t.bestParam[:0], t.m.params...)
		}
		last := epoch == t.cfg.MaxEpochs || epoch-t.bestEpoch >= t.cfg.Patience
		t.reportEpoch(epoch, loss, last)
		if last {
			break
		}
	}
	copy(t.m.params, t.bestParam)
	return nil
}

// reportEpoch tells cfg.OnEpoch, if set, how the fit stands after epoch.
func (t *trainer) reportEpoch(epoch int, loss float64, last bool) {
	if t.cfg.OnEpoch != nil {
		t.cfg.OnEpoch(EpochProgress{Epoch: epoch, MaxEpochs: t.cfg.MaxEpochs, Loss: loss,
			BestLoss: t.bestLoss, BestEpoch: t.bestEpoch, Patience: t.cfg.Patience, Last: last})
	}
}

// step takes one Adam step on the weighted MSE of the batch.
func (t *trainer) step(batch []int) {
	t.forwardSlots(batch)
	var wsum float64
	for _, i := range batch {
		wsum += t.weight[i]
	}
	clear(t.slotGrad)
	for _, i := range batch {
		steps := t.ds.steps[i]
		if t.cfg.Target == TargetStep {
			c := 2 * t.weight[i] / (float64(len(steps)) * wsum)
			for _, r := range steps {
				s := t.slotOf[r]
				t.slotGrad[s] += c * (t.slotR[s] - t.ds.outcome[i])
			}
			continue
		}
		var rhat float64
		for _, r := range steps {
			rhat += t.slotR[t.slotOf[r]]
		}
		c := 2 * t.weight[i] * (rhat - t.ds.outcome[i]) / wsum
		for _, r := range steps {
			t.slotGrad[t.slotOf[r]] += c
		}
	}
	t.m.backwardRows(t.slotX, len(t.slotRows), t.slotHid, t.slotR, t.slotGrad, t.grad)
	t.opt.step(t.m.params, t.grad)
	t.releaseSlots()
}

// forwardSlots gives every distinct row of the batch a slot and evaluates
// it, keeping the rows (slotX) and their activations (slotHid) for the
// backward pass. Only minibatches take this path; whole splits are scored
// by scoreSlots.
func (t *trainer) forwardSlots(batch []int) {
	t.assignSlots(batch)
	h := t.m.hidden
	n := len(t.slotRows)
	t.slotR = grow(t.slotR, n)
	t.slotHid = grow(t.slotHid, n*h)
	t.slotGrad = grow(t.slotGrad, n)
	t.slotX = grow(t.slotX, n*t.m.dim)
	for s, r := range t.slotRows {
		x := t.slotX[s*t.m.dim : (s+1)*t.m.dim]
		for k, v := range t.ds.row(r) {
			x[k] = float64(v)
		}
	}
	t.m.forwardRows(t.slotX, n, t.slotHid, t.slotR)
}

// assignSlots gives every distinct row of the trajectories idx a slot.
func (t *trainer) assignSlots(idx []int) {
	for _, i := range idx {
		for _, r := range t.ds.steps[i] {
			if t.slotOf[r] < 0 {
				t.slotOf[r] = int32(len(t.slotRows))
				t.slotRows = append(t.slotRows, r)
			}
		}
	}
}

// scoreSlots gives every distinct row of the trajectories idx a slot and
// sets slotR to their scores, scoreChunkRows rows at a time (scoreRows, so
// the same bits as one product over all of them). Scoring the held-out
// split every epoch and the whole training split for the report once held
// every row of the split in float64 with its activations, four times the
// dataset's own float32 rows; a chunk's scratch is a few MiB.
func (t *trainer) scoreSlots(idx []int) {
	t.assignSlots(idx)
	n := len(t.slotRows)
	t.slotR = grow(t.slotR, n)
	// The rows come from memory, so the source never fails.
	_ = t.m.scoreRows(t.slotR, func(m *Model, x []float32, lo, k int) error {
		for s := range k {
			copy(x[s*m.dim:(s+1)*m.dim], t.ds.row(t.slotRows[lo+s]))
		}
		return nil
	})
}

func (t *trainer) releaseSlots() {
	for _, r := range t.slotRows {
		t.slotOf[r] = -1
	}
	t.slotRows = t.slotRows[:0]
}

// trajectoryScores returns R̂ for the trajectories idx, evaluating each
// distinct row once.
func (t *trainer) trajectoryScores(idx []int) []float64 {
	t.scoreSlots(idx)
	out := make([]float64, len(idx))
	for k, i := range idx {
		for _, r := range t.ds.steps[i] {
			out[k] += t.slotR[t.slotOf[r]]
		}
	}
	t.releaseSlots()
	return out
}

// reportScores are the trajectory scores the report evaluates: R̂, or the
// mean step score with TargetStep (whose steps each estimate R).
func (t *trainer) reportScores(idx []int) []float64 {
	scores := t.trajectoryScores(idx)
	if t.cfg.Target == TargetStep {
		for k, i := range idx {
			scores[k] /= float64(max(1, len(t.ds.steps[i])))
		}
	}
	return scores
}

// weightedLoss is the class-weighted training loss over idx: the mean of
// (R̂ − R)², or with TargetStep of the per-trajectory mean of (r̂_t − R)².
func (t *trainer) weightedLoss(idx []int) float64 {
	if t.cfg.Target == TargetStep {
		return t.stepLoss(idx)
	}
	scores := t.trajectoryScores(idx)
	var loss, wsum float64
	for k, i := range idx {
		d := scores[k] - t.ds.outcome[i]
		loss += t.weight[i] * d * d
		wsum += t.weight[i]
	}
	return loss / wsum
}

// stepLoss is TargetStep's weighted loss over idx.
func (t *trainer) stepLoss(idx []int) float64 {
	t.scoreSlots(idx)
	defer t.releaseSlots()
	var loss, wsum float64
	for _, i := range idx {
		var l float64
		for _, r := range t.ds.steps[i] {
			d := t.slotR[t.slotOf[r]] - t.ds.outcome[i]
			l += d * d
		}
		loss += t.weight[i] * l / float64(max(1, len(t.ds.steps[i])))
		wsum += t.weight[i]
	}
	return loss / wsum
}

// report summarises the fitted (best) model.
func (t *trainer) report(cfg TrainConfig) TrainReport {
	rep := TrainReport{
		Version: t.m.Version, WarmStart: cfg.WarmStart != nil,
		Trajectories: len(t.ds.steps), UniqueSteps: t.ds.numRows(), Steps: t.ds.stepCount,
		Train: len(t.trainIdx), Heldout: len(t.heldIdx), Weighting: cfg.Weighting, Target: cfg.Target,
		Epochs: t.epochs, BestEpoch: t.bestEpoch, HeldoutWeightedMSE: t.bestLoss,
	}
	if cfg.WarmStart != nil {
		rep.FromVersion = cfg.WarmStart.Version
	}
	for _, ok := range t.ds.success {
		if ok {
			rep.Successes++
		}
	}
	rep.SuccessWeight, rep.FailureWeight = classWeights(t.ds.success, t.trainIdx, cfg.Weighting)
	rep.TrainMSE = MSE(t.reportScores(t.trainIdx), t.pick(t.ds.outcome, t.trainIdx))
	held := t.pick(t.ds.outcome, t.heldIdx)
	heldSuccess := make([]bool, len(t.heldIdx))
	for k, i := range t.heldIdx {
		heldSuccess[k] = t.ds.success[i]
	}
	rep.HeldoutEval = evaluation(t.reportScores(t.heldIdx), held, heldSuccess)
	mean := 0.0
	for _, i := range t.trainIdx {
		mean += t.ds.outcome[i] / float64(len(t.trainIdx))
	}
	base := make([]float64, len(held))
	for k := range base {
		base[k] = mean
	}
	rep.BaselineMSE = MSE(base, held)
	return rep
}

func (t *trainer) pick(v []float64, idx []int) []float64 {
	out := make([]float64, len(idx))
	for k, i := range idx {
		out[k] = v[i]
	}
	return out
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n, 2*n)
	}
	return s[:n]
}
