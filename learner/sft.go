package learner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
)

// SFTConfig configures supervised fine-tuning: maximum likelihood of the
// actions of demonstrations, with a held-out share for early stopping.
type SFTConfig struct {
	// LR is Adam's learning rate. Default 0.01.
	LR float64
	// MaxEpochs bounds the passes over the training demonstrations.
	// Default 50.
	MaxEpochs int
	// Patience stops training after this many epochs without a lower
	// held-out loss; the best epoch's weights are kept. Default 5.
	Patience int
	// HeldOut is the share of demonstrations (by task) held out to measure
	// the loss early stopping watches. Default 0.1; at least one
	// demonstration is held out and one trained on.
	HeldOut float64
	// Batch is the number of demonstrations per optimiser step. Default 16.
	Batch int
	// Seed orders the demonstrations and draws the held-out split.
	// Default 1.
	Seed int64
	// OnEpoch, if set, hears every epoch's figures.
	OnEpoch func(SFTEpoch)
}

// SFTEpoch is one epoch's progress.
type SFTEpoch struct {
	Epoch int
	// TrainLoss and HeldOutLoss are the mean negative log-likelihood of a
	// demonstrated action, in nats; HeldOutAccuracy the share of held-out
	// steps whose most probable action is the demonstrated one.
	TrainLoss, HeldOutLoss, HeldOutAccuracy float64
	// BestEpoch is the epoch of the lowest held-out loss so far.
	BestEpoch int
	// Patience is the configured patience; Last marks the final epoch.
	Patience int
	Last     bool
}

// SFTReport is what supervised fine-tuning did.
type SFTReport struct {
	// Train and HeldOut count the demonstrations and their steps.
	TrainDemos, HeldOutDemos, TrainSteps, HeldOutSteps int
	// Epochs is how many epochs ran; BestEpoch the one whose weights were
	// kept (0: none improved on the starting policy, which is kept).
	Epochs, BestEpoch int
	// StartLoss is the held-out loss of the starting policy; HeldOutLoss
	// and HeldOutAccuracy the kept policy's.
	StartLoss, HeldOutLoss, HeldOutAccuracy float64
}

func (c SFTConfig) withDefaults() SFTConfig {
	if c.LR == 0 {
		c.LR = 0.01
	}
	if c.MaxEpochs == 0 {
		c.MaxEpochs = 50
	}
	if c.Patience == 0 {
		c.Patience = 5
	}
	if c.HeldOut == 0 {
		c.HeldOut = 0.1
	}
	if c.Batch == 0 {
		c.Batch = 16
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	return c
}

// Validate reports every problem with the (defaulted) configuration.
func (c SFTConfig) Validate() error {
	c = c.withDefaults()
	var errs []error
	if !(c.LR > 0) || math.IsInf(c.LR, 0) {
		errs = append(errs, fmt.Errorf("%w: sft learning rate %v: want a finite number above 0", ErrConfig, c.LR))
	}
	if c.MaxEpochs < 1 || c.Patience < 1 || c.Batch < 1 {
		errs = append(errs, fmt.Errorf("%w: sft epochs %d, patience %d and batch %d must be at least 1", ErrConfig, c.MaxEpochs, c.Patience, c.Batch))
	}
	if !(c.HeldOut > 0 && c.HeldOut < 1) {
		errs = append(errs, fmt.Errorf("%w: sft held-out share %v: want a share between 0 and 1", ErrConfig, c.HeldOut))
	}
	return errors.Join(errs...)
}

// ErrNoDemos means supervised fine-tuning was given too few usable
// demonstrations: it needs two, one to train on and one to hold out.
var ErrNoDemos = errors.New("learner: too few demonstrations")

// demo is a demonstration featurised for the policy.
type demo struct {
	feats   []*policy.Features
	actions []int
}

// SFT trains p in place by maximum likelihood on the actions of demos
// (every step's ActionIndex in its admissible list) and leaves it at the
// epoch of the lowest held-out loss. Demonstrations are split by task, so
// no held-out task was trained on. ctx ends training early with its error.
func SFT(ctx context.Context, p *policy.Policy, demos []*schemas.Trajectory, cfg SFTConfig) (SFTReport, error) {
	if err := cfg.Validate(); err != nil {
		return SFTReport{}, err
	}
	cfg = cfg.withDefaults()
	rng := sftRand(cfg.Seed)
	train, held, err := splitDemos(p, demos, cfg.HeldOut, rng)
	if err != nil {
		return SFTReport{}, err
	}
	opt, err := policy.NewAdam(p, policy.AdamConfig{LR: cfg.LR})
	if err != nil {
		return SFTReport{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	rep := SFTReport{TrainDemos: len(train), HeldOutDemos: len(held), TrainSteps: countDemoSteps(train), HeldOutSteps: countDemoSteps(held)}
	rep.StartLoss, rep.HeldOutAccuracy = demoLoss(p, held)
	rep.HeldOutLoss = rep.StartLoss
	best := p.Clone()
	g, ps := p.NewGrads(), &policy.Pass{}
	for epoch := 1; epoch <= cfg.MaxEpochs; epoch++ {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		rng.Shuffle(len(train), func(i, j int) { train[i], train[j] = train[j], train[i] })
		trainLoss := sftEpoch(p, opt, g, ps, train, cfg.Batch)
		loss, acc := demoLoss(p, held)
		rep.Epochs = epoch
		if loss < rep.HeldOutLoss {
			rep.HeldOutLoss, rep.HeldOutAccuracy, rep.BestEpoch = loss, acc, epoch
			best.CopyFrom(p)
		}
		last := epoch == cfg.MaxEpochs || epoch-rep.BestEpoch >= cfg.Patience
		if cfg.OnEpoch != nil {
			cfg.OnEpoch(SFTEpoch{Epoch: epoch, TrainLoss: trainLoss, HeldOutLoss: loss, HeldOutAccuracy: acc,
				BestEpoch: rep.BestEpoch, Patience: cfg.Patience, Last: last})
		}
		if last {
			break
		}
	}
	p.CopyFrom(best)
	return rep, nil
}

// sftRand is SFT's random source for seed: the held-out draw first, then
// each epoch's order.
func sftRand(seed int64) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), 0x736674)) }

// splitDemos featurises the demonstrations and holds out a share of their
// tasks; a trajectory whose states cannot be rebuilt is refused.
func splitDemos(p *policy.Policy, demos []*schemas.Trajectory, share float64, rng *rand.Rand) (train, held []demo, err error) {
	byTask := map[string][]demo{}
	var tasks []string
	fz := p.NewFeaturizer()
	for _, t := range demos {
		states, err := policy.StatesFromTrajectory(t)
		if err != nil {
			return nil, nil, fmt.Errorf("learner: demonstration %s: %w", t.ID, err)
		}
		feats, err := fz.Episode(states)
		if err != nil {
			return nil, nil, fmt.Errorf("learner: demonstration %s: %w", t.ID, err)
		}
		d := demo{feats: feats, actions: make([]int, len(t.Steps))}
		for i, st := range t.Steps {
			d.actions[i] = int(st.ActionIndex)
		}
		if _, seen := byTask[t.TaskID]; !seen {
			tasks = append(tasks, t.TaskID)
		}
		byTask[t.TaskID] = append(byTask[t.TaskID], d)
	}
	if len(tasks) < 2 {
		return nil, nil, fmt.Errorf("%w: %d demonstrations of %d tasks; want demonstrations of at least 2 tasks", ErrNoDemos, len(demos), len(tasks))
	}
	rng.Shuffle(len(tasks), func(i, j int) { tasks[i], tasks[j] = tasks[j], tasks[i] })
	nHeld := min(len(tasks)-1, max(1, int(math.Round(share*float64(len(tasks))))))
	for i, task := range tasks {
		if i < nHeld {
			held = append(held, byTask[task]...)
		} else {
			train = append(train, byTask[task]...)
		}
	}
	return train, held, nil
}

// sftEpoch takes one optimiser step per batch of demonstrations, each on
// the mean negative log-likelihood of the batch's steps, and returns the
// epoch's mean loss per step.
func sftEpoch(p *policy.Policy, opt *policy.Adam, g *policy.Grads, ps *policy.Pass, train []demo, batch int) float64 {
	var total float64
	var steps int
	var d []float64
	for lo := 0; lo < len(train); lo += batch {
		chunk := train[lo:min(lo+batch, len(train))]
		n := countDemoSteps(chunk)
		g.Zero()
		for _, dm := range chunk {
			for i, f := range dm.feats {
				p.ForwardActions(f, ps)
				d = resize(d, len(ps.LogProbs))
				a := dm.actions[i]
				total -= ps.LogProbs[a]
				policy.AddLogProbGrad(d, ps.LogProbs, a, -1/float64(n))
				_ = p.Backward(ps, d, 0, g) // shapes match by construction
			}
		}
		steps += n
		_ = opt.Step(p, g) // the gradients are p's own
	}
	return total / float64(max(1, steps))
}

// demoLoss is the mean negative log-likelihood of the demonstrated
// actions under p, and the share of steps where p's most probable action
// is the demonstrated one.
func demoLoss(p *policy.Policy, demos []demo) (loss, accuracy float64) {
	var ps policy.Pass
	n := 0
	for _, dm := range demos {
		for i, f := range dm.feats {
			p.ForwardActions(f, &ps)
			loss -= ps.LogProbs[dm.actions[i]]
			accuracy += b2f(policy.Argmax(ps.LogProbs) == dm.actions[i])
			n++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return loss / float64(n), accuracy / float64(n)
}

func countDemoSteps(ds []demo) int {
	n := 0
	for _, d := range ds {
		n += len(d.actions)
	}
	return n
}
