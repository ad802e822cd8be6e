package policy

import "github.com/rspo-dev/rspo/envs"

// Fork returns an agent that acts as a does — same policy, greediness and
// tilt — with a history of its own, so several episodes can be played at
// once (rollout.Evaluate hands one fork to each worker). The policy itself
// is shared: acting only reads it.
func (a *Agent) Fork() envs.Agent {
	return &Agent{p: a.p, greedy: a.greedy, fz: a.p.NewFeaturizer(), tilt: a.tilt, lambda: a.lambda}
}
