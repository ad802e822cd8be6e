package policy_test

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/policy"
)

// scorerFunc adapts a function to policy.ActionScorer.
type scorerFunc func(instruction, observation string, actions []string, dst []float64)

func (f scorerFunc) ScoreActions(instruction, observation string, actions []string, dst []float64) {
	f(instruction, observation, actions, dst)
}

// byLength scores an action by its length: a score that differs between
// actions, so the tilt changes the distribution.
var byLength = scorerFunc(func(_, _ string, actions []string, dst []float64) {
	for a, act := range actions {
		dst[a] = float64(len(act)) / 10
	}
})

func TestTiltWithZeroScoresChangesNothing(t *testing.T) {
	env, task := courierTask(t, 2)
	p := randomPolicy(t)
	zero := scorerFunc(func(_, _ string, actions []string, dst []float64) { clear(dst[:len(actions)]) })
	plain, err := policy.Rollout(context.Background(), env, task, p, policy.RolloutOptions{Seed: 3, Clock: fixedClock})
	if err != nil {
		t.Fatal(err)
	}
	tilted, err := policy.Rollout(context.Background(), env, task, p, policy.RolloutOptions{Seed: 3, Clock: fixedClock,
		Tilt: zero, TiltStrength: 5})
	if err != nil {
		t.Fatal(err)
	}
	for i := range plain.Steps { // the log-softmax is recomputed, so compare to rounding
		if d := math.Abs(plain.Steps[i].BehaviorLogProb - tilted.Steps[i].BehaviorLogProb); d > 1e-12 {
			t.Fatalf("step %d: log-prob %v vs %v", i, plain.Steps[i].BehaviorLogProb, tilted.Steps[i].BehaviorLogProb)
		}
		tilted.Steps[i].BehaviorLogProb = plain.Steps[i].BehaviorLogProb
	}
	if !reflect.DeepEqual(plain, tilted) {
		t.Fatal("a zero score changed the trajectory")
	}
}

// The recorded behaviour log-prob must be the tilted policy's, exactly
// log(π(a)·e^{λ·s(a)} / Σ_b π(b)·e^{λ·s(b)}), or the generalized clip is
// centred at the wrong place.
func TestTiltRecordsTheTiltedLogProb(t *testing.T) {
	env, task := courierTask(t, 4)
	p := randomPolicy(t)
	const lambda = 2.5
	tr, err := policy.Rollout(context.Background(), env, task, p, policy.RolloutOptions{Seed: 9, Tilt: byLength, TiltStrength: lambda})
	if err != nil {
		t.Fatal(err)
	}
	states, err := policy.StatesFromTrajectory(tr)
	if err != nil {
		t.Fatal(err)
	}
	feats, err := p.NewFeaturizer().Episode(states)
	if err != nil {
		t.Fatal(err)
	}
	var ps policy.Pass
	for i, f := range feats {
		p.Forward(f, &ps)
		scores := make([]float64, len(states[i].Admissible))
		byLength(states[i].Instruction, states[i].Observation, states[i].Admissible, scores)
		z := 0.0
		for a := range scores {
			z += math.Exp(ps.LogProbs[a] + lambda*scores[a])
		}
		a := tr.Steps[i].ActionIndex
		want := ps.LogProbs[a] + lambda*scores[a] - math.Log(z)
		if got := tr.Steps[i].BehaviorLogProb; math.Abs(got-want) > 1e-9 {
			t.Fatalf("step %d: recorded log-prob %v, want the tilted %v", i, got, want)
		}
	}
}

func TestStrongTiltFollowsTheScore(t *testing.T) {
	env, task := courierTask(t, 1)
	p := randomPolicy(t)
	// Prefer any action naming "go": a strong tilt must take one whenever
	// one is admissible, whatever the policy says.
	preferGo := scorerFunc(func(_, _ string, actions []string, dst []float64) {
		for a, act := range actions {
			dst[a] = 0
			if strings.HasPrefix(act, "go") {
				dst[a] = 1
			}
		}
	})
	for seed := int64(0); seed < 5; seed++ {
		tr, err := policy.Rollout(context.Background(), env, task, p, policy.RolloutOptions{Seed: seed, Tilt: preferGo, TiltStrength: 50})
		if err != nil {
			t.Fatal(err)
		}
		for i, st := range tr.Steps {
			hasGo := false
			for _, a := range st.Admissible {
				hasGo = hasGo || strings.HasPrefix(a, "go")
			}
			if hasGo && !strings.HasPrefix(st.Action, "go") {
				t.Fatalf("seed %d step %d: took %q although a go action was admissible: %v", seed, i, st.Action, st.Admissible)
			}
		}
	}
}
