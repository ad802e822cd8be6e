package shop

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/rspo-dev/rspo/envs"
)

// Name is the registry name of the environment.
const Name = "shop"

func init() {
	envs.Register(Name, func(opts map[string]string) (envs.Env, error) {
		cfg, err := ParseOptions(opts)
		if err != nil {
			return nil, err
		}
		return New(cfg)
	})
	envs.DeclareOptions(Name, envs.OptionSpec{Keys: OptionKeys()})
}

// Env is the shop environment. It is safe for concurrent use; its episodes
// are not.
type Env struct {
	cfg   Config
	world *world
}

var (
	_ envs.Env     = (*Env)(nil)
	_ envs.Planner = (*Env)(nil)
	_ envs.Bounded = (*Env)(nil)
)

// New returns an environment for cfg (zero fields take the preset's
// defaults). It returns a ConfigError (matching ErrConfig) for a bad Config.
// The catalogue and index are built on the first call for a configuration
// and shared afterwards.
func New(cfg Config) (*Env, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Env{cfg: cfg, world: worldFor(cfg)}, nil
}

// Config returns the environment's configuration with defaults filled.
func (e *Env) Config() Config { return e.cfg }

// MaxSteps implements envs.StepLimiter: an episode ends at the step limit.
func (e *Env) MaxSteps() int { return e.cfg.MaxSteps }

// Bounds implements envs.Bounded: the outcome is the purchase's WebShop
// score in [0, 1] (RewardScore) or 1 for a success and 0 otherwise
// (RewardSuccess), 0 without a purchase; either way a success is exactly
// an outcome of 1 (a purchase scoring 1), and the score is graded in [0, 1].
func (e *Env) Bounds() envs.Bounds {
	return envs.Bounds{Reward: envs.Range{Min: 0, Max: 1}, Score: envs.Range{Min: 0, Max: 1},
		TwoValued: e.cfg.Reward == RewardSuccess, SuccessPaysMax: true}
}

// Name returns "shop".
func (e *Env) Name() string { return Name }

// Splits returns the train and eval splits.
func (e *Env) Splits() []string { return []string{envs.SplitTrain, envs.SplitEval} }

// SourceOptions implements envs.Curriculum: the easy preset (near-duplicate
// families of 2, one attribute and option per instruction) on this
// configuration's catalogue and goals, so the PRM learns the same products,
// paid by the same reward, so it learns the outcome the target trains on.
// The default reward is left out, so source runs keep the names they had
// before the option existed.
func (e *Env) SourceOptions() map[string]string {
	opts := map[string]string{"preset": PresetEasy, "catalogue_size": strconv.Itoa(e.cfg.CatalogueSize), "goals": strconv.Itoa(e.cfg.Goals)}
	if e.cfg.Reward != RewardScore {
		opts["reward"] = e.cfg.Reward
	}
	return opts
}

// SourceUpdates implements envs.Curriculum: 30. Every category of the
// shop asks for the same skill (search, open the matching item, choose
// its options, buy), and GRPO on the easy preset has it by then: eval
// success 0.38–0.50 after 30 updates on either reward, 0.59–0.63 after
// 100. A PRM of 30-update runs steers the standard preset's target about
// as well as one of 100-update runs did, at a third of the source steps,
// which the compute-fair view charges to the target (the figures: the
// section "Trained on success, as verl-agent trains WebShop" in the git
// history of docs/experiments.md).
func (e *Env) SourceUpdates() int { return 30 }

// TaskTypes returns the product categories: beauty, electronics, fashion,
// food, furniture, home.
func (e *Env) TaskTypes() []string { return append([]string(nil), categories...) }

// Tasks returns tasks of a split. Eval holds goals 0..499 in order (n ≤ 0
// or n ≥ 500 gives all of them, otherwise the first n). Train holds the
// remaining goals: n ≤ 0 gives all in order, otherwise n goals in an order
// drawn from seed (cycling through fresh permutations if n exceeds the
// split). Errors: envs.ErrUnknownSplit, or a goal generation failure.
func (e *Env) Tasks(split string, n int, seed int64) ([]envs.Task, error) {
	var goals []int
	switch split {
	case envs.SplitEval:
		goals = seq(0, EvalGoals)
		if n > 0 && n < EvalGoals {
			goals = goals[:n]
		}
	case envs.SplitTrain:
		goals = e.trainGoals(n, seed)
	default:
		return nil, fmt.Errorf("%w %q for shop (known: %v)", envs.ErrUnknownSplit, split, e.Splits())
	}
	tasks := make([]envs.Task, len(goals))
	for i, g := range goals {
		t, err := e.task(g)
		if err != nil {
			return nil, err
		}
		tasks[i] = t
	}
	return tasks, nil
}

// trainGoals returns the goal indices of n train tasks drawn from seed.
func (e *Env) trainGoals(n int, seed int64) []int {
	pool := e.cfg.Goals - EvalGoals
	if n <= 0 {
		return seq(EvalGoals, e.cfg.Goals)
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x7a5c_5407))
	out := make([]int, 0, n)
	for len(out) < n {
		for _, i := range rng.Perm(pool)[:min(pool, n-len(out))] {
			out = append(out, EvalGoals+i)
		}
	}
	return out
}

// seq returns lo, lo+1, …, hi-1.
func seq(lo, hi int) []int {
	out := make([]int, hi-lo)
	for i := range out {
		out[i] = lo + i
	}
	return out
}

// task returns the task of goal index i.
func (e *Env) task(i int) (envs.Task, error) {
	g, err := e.world.goal(i)
	if err != nil {
		return envs.Task{}, err
	}
	split := envs.SplitTrain
	if i < EvalGoals {
		split = envs.SplitEval
	}
	return envs.Task{
		ID:          fmt.Sprintf("%s/%s/%d", Name, split, i),
		Type:        productTypes[e.world.cat.products[g.target].ptype].Category,
		Split:       split,
		Seed:        int64(i),
		Instruction: g.instruction,
	}, nil
}

// Reset starts an episode of task, which must be one this environment's
// Tasks returns (with the same configuration); anything else is an ErrTask.
func (e *Env) Reset(task envs.Task) (envs.Episode, error) {
	if task.Seed < 0 || task.Seed >= int64(e.cfg.Goals) {
		return nil, fmt.Errorf("%w: seed %d is not a goal index 0..%d", ErrTask, task.Seed, e.cfg.Goals-1)
	}
	want, err := e.task(int(task.Seed))
	if err != nil {
		return nil, err
	}
	if task != want {
		return nil, fmt.Errorf("%w: got %+v, but goal %d of this configuration is %+v", ErrTask, task, task.Seed, want)
	}
	g, err := e.world.goal(int(task.Seed))
	if err != nil {
		return nil, err
	}
	return newEpisode(e, task, g), nil
}
