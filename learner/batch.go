package learner

import (
	"fmt"
	"math"

	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
)

// sample is one trajectory of a batch with everything an update needs,
// computed once per update and reused by every epoch.
type sample struct {
	t     *schemas.Trajectory
	off   bool
	group int                // index of the normalisation group
	feats []*policy.Features // per step; nil when unfeaturised (featErr)
	// featErr says why the built-in policy cannot featurise the trajectory
	// (no admissible actions recorded, an action not among them): such a
	// sample can be exported to another trainer but not applied here.
	featErr error
	rewards []float64 // per step, from the configured source
	ret     float64   // Σ rewards
	behLogP []float64 // log π_B(a_t|s_t), recorded by the actor
	oldLogP []float64 // log π_old(a_t|s_t): behaviour for on-policy, computed for off-policy
	// stale marks an on-policy sample of an older policy version under
	// Config.Decoupled (the decoupled term); proxLogP is its log
	// π_prox(a_t|s_t), the policy before the update — nil when the update
	// is one pass (one epoch, one minibatch), whose forward pass is π_prox.
	stale    bool
	proxLogP []float64
	refLogP  [][]float64 // log π_ref(·|s_t)
	values   []float64   // V_old(s_t)
	targets  []float64   // value targets (PPO)
	adv      []float64   // per-step advantage
	loops    []bool      // per step, on a loop (loopSteps); see onLoop
	swap     []float64   // per-step swap coefficient c_j (on-policy only)
}

// newSample checks t and featurises it. A trajectory the built-in policy
// cannot read (policy.StatesFromTrajectory refuses it: an LLM policy's
// free-text action, no admissible list) keeps the reason in featErr.
func newSample(t *schemas.Trajectory, off bool, src RewardSource, fz *policy.Featurizer) (*sample, error) {
	fail := func(reason string, err error) error {
		return &BatchError{ID: t.ID, OffPolicy: off, Reason: reason, Err: err}
	}
	if t == nil {
		return nil, &BatchError{OffPolicy: off, Reason: "nil trajectory"}
	}
	if len(t.Steps) == 0 {
		return nil, fail("no steps", nil)
	}
	if src == RewardOutcome && t.Source == schemas.SourceExplore && !t.Swapped {
		return nil, fail("explorer trajectory not swapped: its rewards are dense labels, not outcomes", nil)
	}
	s := &sample{t: t, off: off, rewards: make([]float64, len(t.Steps)), behLogP: make([]float64, len(t.Steps))}
	if states, err := policy.StatesFromTrajectory(t); err != nil {
		s.featErr = fail("cannot rebuild states", err)
	} else if s.feats, err = fz.Episode(states); err != nil {
		return nil, fail("cannot featurise", err)
	}
	for i, st := range t.Steps {
		r := st.Reward
		if src == RewardDense {
			r = st.DenseReward
		}
		if math.IsNaN(r) || math.IsInf(r, 0) {
			return nil, fail(fmt.Sprintf("step %d: %s reward %v", i, src, r), nil)
		}
		if !(st.BehaviorLogProb <= 1e-9) || math.IsInf(st.BehaviorLogProb, 0) {
			return nil, fail(fmt.Sprintf("step %d: behaviour log-prob %v not a finite value ≤ 0", i, st.BehaviorLogProb), nil)
		}
		s.rewards[i], s.behLogP[i] = r, min(st.BehaviorLogProb, 0)
		s.ret += r
	}
	s.oldLogP = s.behLogP
	return s, nil
}

// group is a set of samples normalised together: the on-policy rollouts of
// one task (GroupID) and the off-policy trajectories of the same task.
type group struct {
	key     string
	members []int
	hasOn   bool
}

// groupSamples assigns every sample to a group: on-policy samples by
// GroupID (TaskID when empty), off-policy samples to the first on-policy
// group of their TaskID, else to a per-task fallback group (hasOn false).
func groupSamples(samples []*sample) []*group {
	var groups []*group
	byKey := map[string]*group{}
	byTask := map[string]int{}
	add := func(key string, i int, on bool) {
		g, ok := byKey[key]
		if !ok {
			g = &group{key: key, hasOn: on}
			byKey[key] = g
			groups = append(groups, g)
		}
		samples[i].group = indexOfGroup(groups, g)
		g.members = append(g.members, i)
	}
	for i, s := range samples {
		if s.off {
			continue
		}
		key := s.t.GroupID
		if key == "" {
			key = s.t.TaskID
		}
		add("on\x00"+key, i, true)
		if _, ok := byTask[s.t.TaskID]; !ok {
			byTask[s.t.TaskID] = samples[i].group
		}
	}
	for i, s := range samples {
		if !s.off {
			continue
		}
		if gi, ok := byTask[s.t.TaskID]; ok {
			samples[i].group = gi
			groups[gi].members = append(groups[gi].members, i)
			continue
		}
		add("off\x00"+s.t.TaskID, i, false)
	}
	return groups
}

func indexOfGroup(groups []*group, g *group) int {
	for i := len(groups) - 1; i >= 0; i-- {
		if groups[i] == g {
			return i
		}
	}
	return -1
}
