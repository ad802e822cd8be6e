package rollout

import (
	"context"
	"errors"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
)

// A Player plays one episode and records it as a trajectory: every step's
// observation, admissible list, action (and its index), behaviour log-prob
// and reward, the outcome, and the episode's provenance from ep.Opts. The
// built-in policy plays in-process (PolicyPlayer); a policy behind an
// OpenAI-compatible inference server plays through package llm. A Player
// must be safe for concurrent use: All runs many episodes at once.
type Player interface {
	Play(ctx context.Context, env envs.Env, ep Episode) (*schemas.Trajectory, error)
}

// ErrUnavailable marks a Play error that may pass: the player's inference
// server was unreachable, overloaded or not yet serving the version. An
// actor retries a request whose episodes failed with it instead of
// dead-lettering the request (other Play errors are deterministic).
var ErrUnavailable = errors.New("rollout: the player's server is unavailable")

// PolicyPlayer plays with the built-in policy (policy.Rollout).
type PolicyPlayer struct{ Policy *policy.Policy }

var _ Player = PolicyPlayer{}

// Play plays ep with the policy; it is deterministic given ep.Opts.Seed.
func (p PolicyPlayer) Play(ctx context.Context, env envs.Env, ep Episode) (*schemas.Trajectory, error) {
	return policy.Rollout(ctx, env, ep.Task, p.Policy, ep.Opts)
}
