package policy

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/rspo-dev/rspo/policy/policytest"

	"github.com/rspo-dev/rspo/envs"
	_ "github.com/rspo-dev/rspo/envs/household"
	"github.com/rspo-dev/rspo/schemas"
)

func paramHash(p *Policy) string {
	var h policytest.BitHash
	h.Floats(p.params...)
	return h.String()
}

func gradHash(g *Grads) string {
	var h policytest.BitHash
	h.Floats(g.data...)
	return h.String()
}

// goldenScorer is a deterministic stand-in for a reward model.
type goldenScorer struct{}

func (goldenScorer) ScoreActions(_, obs string, actions []string, dst []float64) {
	for i, a := range actions {
		dst[i] = float64((len(a)*7+len(obs))%5) / 4
	}
}

// goldenRollouts plays n episodes of each task with p.
func goldenRollouts(t *testing.T, env envs.Env, tasks []envs.Task, p *Policy, n int, opts RolloutOptions) []*schemas.Trajectory {
	t.Helper()
	var out []*schemas.Trajectory
	for i, task := range tasks {
		for j := range n {
			o := opts
			o.Seed = opts.Seed*1000 + int64(i*10+j)
			tr, err := Rollout(context.Background(), env, task, p, o)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, tr)
		}
	}
	return out
}

// goldenTrain moves p away from its initialisation with Adam steps on the
// log-likelihood of the actions of ts, weighted by their outcome, and
// returns the hash of the first gradient.
func goldenTrain(t *testing.T, p *Policy, ts []*schemas.Trajectory, steps int) string {
	t.Helper()
	opt, err := NewAdam(p, AdamConfig{LR: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	g := p.NewGrads()
	var ps Pass
	first := ""
	for k := range steps {
		g.Zero()
		for i, tr := range ts {
			states, err := StatesFromTrajectory(tr)
			if err != nil {
				t.Fatal(err)
			}
			feats, err := p.NewFeaturizer().Episode(states)
			if err != nil {
				t.Fatal(err)
			}
			c := float64(i%3) - 1 // pushes some trajectories up, some down
			for j, f := range feats {
				p.Forward(f, &ps)
				d := make([]float64, len(ps.LogProbs))
				AddLogProbGrad(d, ps.LogProbs, int(tr.Steps[j].ActionIndex), -c)
				AddEntropyGrad(d, ps.LogProbs, 0.01)
				if err := p.Backward(&ps, d, 0.1*(ps.Value-tr.OutcomeReward), g); err != nil {
					t.Fatal(err)
				}
			}
		}
		g.ClipNorm(1)
		if k == 0 {
			first = gradHash(g)
		}
		if err := opt.Step(p, g); err != nil {
			t.Fatal(err)
		}
	}
	return first
}

// TestGoldenRollouts pins rollouts, gradients and Adam updates bit for bit:
// speed work on the policy must not change a single rounding.
func TestGoldenRollouts(t *testing.T) {
	var buf bytes.Buffer
	for _, preset := range []string{"alfworld", "easy"} {
		env, err := envs.New("household", map[string]string{"preset": preset})
		if err != nil {
			t.Fatal(err)
		}
		tasks, err := env.Tasks(envs.SplitTrain, 3, 7)
		if err != nil {
			t.Fatal(err)
		}
		p := newTestPolicy(t, Config{})
		line := func(name, hash string) { fmt.Fprintf(&buf, "%s %s %s\n", preset, name, hash) }
		sampled := goldenRollouts(t, env, tasks, p, 2, RolloutOptions{Seed: 1})
		line("untrained/sampled", policytest.TrajectoryHash(sampled))
		line("untrained/tilted", policytest.TrajectoryHash(goldenRollouts(t, env, tasks, p, 2,
			RolloutOptions{Seed: 2, Tilt: goldenScorer{}, TiltStrength: 1.5})))
		line("train/first-grad", goldenTrain(t, p, sampled, 4))
		line("train/params", paramHash(p))
		line("trained/sampled", policytest.TrajectoryHash(goldenRollouts(t, env, tasks, p, 2, RolloutOptions{Seed: 3})))
		line("trained/greedy", policytest.TrajectoryHash(goldenRollouts(t, env, tasks, p, 1, RolloutOptions{Seed: 4, Greedy: true})))
		line("trained/hot", policytest.TrajectoryHash(goldenRollouts(t, env, tasks, p, 2, RolloutOptions{Seed: 5, Temperature: 2.5})))
		line("trained/value", valueHash(t, p, sampled))
	}
	path := filepath.Join("testdata", "rollouts.golden")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("rollouts differ from %s (%v):\ngot\n%s\nwant\n%s", path, err, buf.String(), want)
	}
}

// valueHash hashes the full distributions and values of p on ts's states,
// and those of a randomly perturbed copy (dense weights off their usual
// values, so every flag and hidden unit matters), with the gradient of
// both summed.
func valueHash(t *testing.T, p *Policy, ts []*schemas.Trajectory) string {
	t.Helper()
	q := p.Clone()
	rng := rand.New(rand.NewPCG(11, 12))
	for i := q.lay.sparse; i < q.lay.total; i++ {
		q.params[i] += round32(rng.NormFloat64() * 0.2)
	}
	var h policytest.BitHash
	var ps Pass
	g := q.NewGrads()
	for _, pol := range []*Policy{p, q} {
		for _, tr := range ts {
			states, err := StatesFromTrajectory(tr)
			if err != nil {
				t.Fatal(err)
			}
			feats, err := pol.NewFeaturizer().Episode(states)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range feats {
				pol.Forward(f, &ps)
				h.Floats(ps.LogProbs...)
				h.Floats(ps.Probs...)
				h.Floats(ps.Value)
				d := make([]float64, len(ps.LogProbs))
				AddLogProbGrad(d, ps.LogProbs, len(d)/2, 0.5)
				AddKLGrad(d, ps.LogProbs, ps.Probs, 0.1) // any fixed q will do
				if err := pol.Backward(&ps, d, ps.Value, g); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return h.String() + " " + gradHash(g)
}
