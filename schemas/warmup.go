package schemas

import "strings"

// PRMWarmupTag tags the learner's PRM warm-up rollout requests: before the
// first cycle, without a PRM file, the learner asks the actors for
// rollouts of the current policy to train the initial PRM on. Their
// request ids, and so the group ids of the trajectories that answer them
// ("prm-warmup-v0-0/<task>"), start with the tag and a dash; they are
// on-policy rollouts on traj.onpolicy like the training ones.
const PRMWarmupTag = "prm-warmup"

// PRMWarmup reports whether t is a rollout of the PRM warm-up.
func (t *Trajectory) PRMWarmup() bool {
	return t.Source == SourceOnPolicy && strings.HasPrefix(t.GroupID, PRMWarmupTag+"-")
}
