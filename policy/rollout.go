package policy

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/schemas"
)

// ErrEpisodeTooLong means an episode did not end within RolloutOptions.MaxSteps.
var ErrEpisodeTooLong = errors.New("policy: episode exceeded the step cap")

// DefaultMaxSteps caps rollouts whose options leave MaxSteps zero.
// Environments end their episodes themselves; the cap only guards against
// one that never does.
const DefaultMaxSteps = 1000

// RolloutOptions are the per-episode knobs of Rollout.
type RolloutOptions struct {
	// Seed seeds the action sampling; equal seeds give equal trajectories.
	Seed int64
	// Greedy takes the most probable action instead of sampling (the
	// recorded log-prob is still the policy's).
	Greedy bool
	// Temperature overrides the policy's softmax temperature when > 0.
	Temperature float64
	// MaxSteps caps the episode; 0 means DefaultMaxSteps.
	MaxSteps int
	// ID is the trajectory id; empty derives one from the task, the seed
	// and the policy version.
	ID string
	// Source defaults to schemas.SourceOnPolicy.
	Source schemas.Source
	// Provenance copied into the trajectory.
	Run      string
	Producer string
	GroupID  string
	Cycle    int64
	Seq      uint64
	// Clock stamps CreatedAt; nil means time.Now.
	Clock func() time.Time
	// Tilt, with TiltStrength λ > 0, samples from the policy tilted by a
	// per-action score: q(a|s) ∝ π(a|s)·exp(λ·score(s,a)), and records
	// log q(a|s) as the behaviour log-prob. q is the closed-form maximiser
	// of E_q[score] − KL(q‖π)/λ at each step, so a dense reward steers the
	// rollout without any training of the policy.
	Tilt         ActionScorer
	TiltStrength float64
}

// ActionScorer scores every admissible action of a state, e.g. a process
// reward model. Implementations must be safe for concurrent use.
type ActionScorer interface {
	// ScoreActions writes the score of each action into dst, which has
	// len(actions) entries.
	ScoreActions(instruction, observation string, actions []string, dst []float64)
}

// Rollout plays one episode of task with p and returns the trajectory with
// every step filled in: observation, admissible list, action and its index,
// behaviour log-prob, the environment's reward and the state key. It is
// deterministic given opts.Seed. It stops with ctx's error when ctx ends.
func Rollout(ctx context.Context, env envs.Env, task envs.Task, p *Policy, opts RolloutOptions) (*schemas.Trajectory, error) {
	if opts.Temperature > 0 {
		var err error
		if p, err = p.WithTemperature(opts.Temperature); err != nil {
			return nil, err
		}
	}
	ep, err := env.Reset(task)
	if err != nil {
		return nil, fmt.Errorf("policy: reset %s: %w", task.ID, err)
	}
	t := NewTrajectory(env, task, p.Version(), opts)
	if err := play(ctx, ep, p, opts, t); err != nil {
		return nil, fmt.Errorf("policy: rollout of %s: %w", task.ID, err)
	}
	t.OutcomeReward, t.Success = ep.Outcome(), ep.Success()
	t.CreatedAt = now(opts)
	return t, nil
}

// play runs the episode, appending a step to t per action.
func play(ctx context.Context, ep envs.Episode, p *Policy, opts RolloutOptions, t *schemas.Trajectory) error {
	maxSteps := opts.MaxSteps
	if maxSteps <= 0 {
		maxSteps = DefaultMaxSteps
	}
	rng := RolloutRand(opts.Seed)
	sc := getScratch(p)
	defer putScratch(sc)
	fz, ps := sc.fz, &sc.ps
	var scores []float64
	var hist []Turn
	for !ep.Done() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(t.Steps) >= maxSteps {
			return fmt.Errorf("%w (%d)", ErrEpisodeTooLong, maxSteps)
		}
		s := State{Instruction: t.Instruction, Observation: ep.Observation(), History: hist,
			Admissible: append([]string(nil), ep.Admissible()...)}
		key := ep.StateKey()
		if err := forward(fz, p, &s, ps, len(t.Steps) == 0); err != nil {
			return fmt.Errorf("step %d: %w", len(t.Steps), err)
		}
		tiltState(ps, &s, opts.Tilt, opts.TiltStrength, &scores)
		idx := Argmax(ps.Probs)
		if !opts.Greedy {
			idx = SampleIndex(ps.Probs, rng)
		}
		res, err := ep.Step(s.Admissible[idx])
		if err != nil {
			return fmt.Errorf("step %d: %w", len(t.Steps), err)
		}
		t.Steps = append(t.Steps, schemas.Step{
			Observation: s.Observation, Admissible: s.Admissible, NumAdmissible: int32(len(s.Admissible)),
			Action: s.Admissible[idx], ActionIndex: int32(idx), BehaviorLogProb: ps.LogProbs[idx],
			Reward: res.Reward, StateKey: key,
		})
		hist = append(hist, Turn{Observation: s.Observation, Action: s.Admissible[idx]})
	}
	return nil
}

// rolloutScratch is what a rollout computes in: reused from one rollout to
// the next, its buffers need no allocation and its action cache (see
// actionCache) carries over while the parameters stay the same.
type rolloutScratch struct {
	fz *Featurizer
	ps Pass
}

// spare holds the scratches of finished rollouts. Unlike a sync.Pool it
// keeps them across garbage collections, which rollouts trigger often and
// which would throw the action caches away.
var spare struct {
	sync.Mutex
	list []*rolloutScratch
}

// maxSpare bounds the kept scratches (each may hold a few MiB of cache).
var maxSpare = 2 * runtime.GOMAXPROCS(0)

// getScratch returns a scratch whose featurizer suits p.
func getScratch(p *Policy) *rolloutScratch {
	spare.Lock()
	var sc *rolloutScratch
	if n := len(spare.list); n > 0 {
		sc, spare.list = spare.list[n-1], spare.list[:n-1]
	}
	spare.Unlock()
	if sc == nil {
		sc = new(rolloutScratch)
	}
	if sc.fz == nil || !sc.fz.suits(p) {
		sc.fz = p.NewFeaturizer()
	}
	return sc
}

func putScratch(sc *rolloutScratch) {
	spare.Lock()
	if len(spare.list) < maxSpare {
		spare.list = append(spare.list, sc)
	}
	spare.Unlock()
}

// forward runs the policy on s, leaving its distribution in ps.
func forward(fz *Featurizer, p *Policy, s *State, ps *Pass, first bool) error {
	f, err := fz.scratch(s, first)
	if err != nil {
		return err
	}
	p.distribution(f, ps) // a rollout records no value
	return nil
}

// tiltState tilts ps, the policy's distribution at s, by sc's scores of
// s's actions (scored into *buf); nothing happens with no scorer or λ ≤ 0.
func tiltState(ps *Pass, s *State, sc ActionScorer, lambda float64, buf *[]float64) {
	if sc == nil || !(lambda > 0) {
		return
	}
	*buf = grow(*buf, len(s.Admissible))
	sc.ScoreActions(s.Instruction, s.Observation, s.Admissible, *buf)
	tilt(ps, *buf, lambda)
}

// tilt replaces ps's distribution π by q ∝ π·exp(λ·scores), in log space.
// A non-finite score leaves its action's probability untilted.
func tilt(ps *Pass, scores []float64, lambda float64) {
	for a := range ps.LogProbs {
		if v := scores[a]; !math.IsNaN(v) && !math.IsInf(v, 0) {
			ps.LogProbs[a] += lambda * v
		}
	}
	logSoftmax(ps.LogProbs, ps.Probs)
}

// RolloutRand is the random source of a rollout with seed seed: step t's
// action is sampled with its (t+1)-th Float64 (SampleIndex). A server that
// replays the built-in rollout's sampling (llm/llmserve) draws from it.
func RolloutRand(seed int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), 0x726f6c6c6f7574))
}

// NewTrajectory returns the trajectory of an episode of task on env played
// by policy version version, before its first step: the provenance from
// opts, and an id derived from the environment, task, seed, version and
// group unless opts.ID gives one. Every player (Rollout, llm.Player)
// starts its trajectories with it.
func NewTrajectory(env envs.Env, task envs.Task, version int64, opts RolloutOptions) *schemas.Trajectory {
	src := opts.Source
	if src == "" {
		src = schemas.SourceOnPolicy
	}
	id := opts.ID
	if id == "" {
		h := fnv.New64a()
		fmt.Fprintf(h, "%s\x00%s\x00%d\x00%d\x00%s", env.Name(), task.ID, opts.Seed, version, opts.GroupID)
		id = fmt.Sprintf("rollout-%016x", h.Sum64())
	}
	return &schemas.Trajectory{
		ID: id, Run: opts.Run, Cycle: opts.Cycle, Source: src, PolicyVersion: version,
		Producer: opts.Producer, Seq: opts.Seq, Env: env.Name(), TaskID: task.ID, TaskType: task.Type,
		TaskSeed: task.Seed, Split: task.Split, Instruction: task.Instruction, GroupID: opts.GroupID,
	}
}

func now(opts RolloutOptions) time.Time {
	if opts.Clock != nil {
		return opts.Clock()
	}
	return time.Now()
}
