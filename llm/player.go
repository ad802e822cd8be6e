package llm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
)

// Player plays episodes through a chat-completions server: one request per
// turn (the turn rendered by the template, logprobs on), the reply mapped
// to an action by ParseAction. Each step records the completion's token
// ids and log-probs, and its behaviour log-prob is the completion's
// log-prob (the sum of its tokens'). It is safe for concurrent use.
//
// The request of turn t carries seed TurnSeed(episode seed, t), so a
// redelivered rollout request reproduces its trajectories on a server that
// honours seeds. The temperature is the episode's (RolloutOptions.
// Temperature; omitted at 0, leaving the server's default), 0 when the
// episode is greedy.
//
// With RolloutOptions.Tilt and TiltStrength λ > 0 a step samples from the
// tilted policy q ∝ π·exp(λ·score) by sampling-importance-resampling: one
// request asks for n = ChatConfig.Candidates completions a_1..a_n ~ π, one
// is resampled with weights exp(λ·score(a_i)), and the behaviour log-prob
// recorded is log π(a) + λ·score(a) − log Ẑ, where Ẑ is the mean of
// exp(λ·score(a_i)): a consistent estimate of log q(a), its bias O(1/n)
// (about 0.07 nats at n = 32 and 0.01 at n = 256 in TestTiltSIR), clamped
// at 0. More candidates cost more tokens and estimate better. A
// non-finite score leaves its candidate untilted. The step's token
// log-probs are π's, of the chosen completion.
type Player struct {
	c       *chat
	model   string
	version int64
}

var _ rollout.Player = (*Player)(nil)

// NewPlayer returns a player of policy version version, served under
// model by ep.
func NewPlayer(ep *Endpoint, cfg ChatConfig, model string, version int64) (*Player, error) {
	c, err := newChat(ep, cfg)
	if err != nil {
		return nil, err
	}
	if model == "" {
		return nil, errors.New("llm: player: no model name: give the name the server serves the policy under")
	}
	return &Player{c: c, model: model, version: version}, nil
}

// Model is the model name the player requests.
func (p *Player) Model() string { return p.model }

// Play plays one episode and returns its trajectory. Provenance is filled
// in as policy.Rollout does (policy.NewTrajectory); the episode is capped
// at ep.Opts.MaxSteps (policy.DefaultMaxSteps when 0).
func (p *Player) Play(ctx context.Context, env envs.Env, ep rollout.Episode) (*schemas.Trajectory, error) {
	opts := ep.Opts
	if opts.Greedy && opts.Tilt != nil && opts.TiltStrength > 0 {
		return nil, errors.New("llm: a tilted episode samples: Greedy and Tilt cannot be combined")
	}
	e, err := env.Reset(ep.Task)
	if err != nil {
		return nil, fmt.Errorf("llm: reset %s: %w", ep.Task.ID, err)
	}
	t := policy.NewTrajectory(env, ep.Task, p.version, opts)
	if err := p.play(ctx, e, opts, t); err != nil {
		return nil, fmt.Errorf("llm: rollout of %s: %w", ep.Task.ID, err)
	}
	t.OutcomeReward, t.Success = e.Outcome(), e.Success()
	if opts.Clock != nil {
		t.CreatedAt = opts.Clock()
	} else {
		t.CreatedAt = time.Now()
	}
	return t, nil
}

func (p *Player) play(ctx context.Context, e envs.Episode, opts policy.RolloutOptions, t *schemas.Trajectory) error {
	maxSteps := opts.MaxSteps
	if maxSteps <= 0 {
		maxSteps = policy.DefaultMaxSteps
	}
	var hist []policy.Turn
	for !e.Done() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(t.Steps) >= maxSteps {
			return fmt.Errorf("%w (%d)", policy.ErrEpisodeTooLong, maxSteps)
		}
		s := policy.State{Instruction: t.Instruction, Observation: e.Observation(), History: hist,
			Admissible: append([]string(nil), e.Admissible()...)}
		key := e.StateKey()
		sp := sampling{seed: TurnSeed(opts.Seed, len(t.Steps)), temperature: opts.Temperature, greedy: opts.Greedy,
			tilt: opts.Tilt, lambda: opts.TiltStrength}
		ch, err := p.c.choose(ctx, p.model, &s, sp)
		if err != nil {
			return fmt.Errorf("step %d: %w", len(t.Steps), err)
		}
		res, err := e.Step(ch.action)
		if err != nil {
			return fmt.Errorf("step %d: %w", len(t.Steps), err)
		}
		t.Steps = append(t.Steps, schemas.Step{
			Observation: s.Observation, Admissible: s.Admissible, NumAdmissible: int32(len(s.Admissible)),
			Action: ch.action, ActionIndex: int32(ch.index), BehaviorLogProb: ch.logProb,
			Reward: res.Reward, StateKey: key, TokenIDs: ch.tokenIDs, TokenLogProbs: ch.tokenLogProbs,
		})
		hist = append(hist, policy.Turn{Observation: s.Observation, Action: ch.action})
	}
	return nil
}

// TurnSeed is the seed of turn t of an episode seeded seed: seed XOR a
// mix of t, so every turn's request has a seed of its own, and a server
// that knows the turn (llmserve reads it off the conversation) recovers
// the episode's seed.
func TurnSeed(seed int64, t int) int64 { return seed ^ int64(splitmix(uint64(t))) }

// EpisodeSeed inverts TurnSeed: the episode seed of a turn-t request
// seeded seed.
func EpisodeSeed(seed int64, t int) int64 { return TurnSeed(seed, t) }

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// clampLogProb keeps a log-prob estimate a valid log-probability.
func clampLogProb(lp float64) float64 {
	if lp > 0 {
		return 0
	}
	return math.Max(lp, -math.MaxFloat64)
}
