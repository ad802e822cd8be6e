package learner

import (
	"bytes"
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rspo-dev/rspo/policy/policytest"

	"github.com/rspo-dev/rspo/envs"
	_ "github.com/rspo-dev/rspo/envs/household"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func paramHash(p *policy.Policy) string {
	v := make([]float64, p.NumParams())
	for i := range v {
		v[i] = p.Param(i)
	}
	var h policytest.BitHash
	h.Floats(v...)
	return h.String()
}

// statsHash hashes every figure of an update; %v prints floats in their
// shortest exact form.
func statsHash(st UpdateStats) string {
	return fmt.Sprintf("%x", sha256.Sum256(fmt.Appendf(nil, "%v", st)))[:24]
}

// TestGoldenUpdates pins whole training loops bit for bit — rollouts of
// the policy as it learns, every update's figures and the parameters after
// it — so that speed work cannot change a single rounding.
func TestGoldenUpdates(t *testing.T) {
	cases := []struct {
		name   string
		preset string
		cfg    Config
		off    bool // add explorer trajectories as off-policy data
	}{
		{"grpo", "easy", Config{}, false},
		{"ppo-epochs", "easy", Config{Algo: PPO, Epochs: 2, MiniBatches: 2}, false},
		{"gigpo-off-swap", "easy", Config{Algo: GiGPO, Swap: SwapConfig{Weight: 0.5, Partners: PartnersKNN}}, true},
		{"old-ratio-entropy", "easy", Config{OffRatio: OffRatioOld, EntropyCoef: 0.01, Epochs: 2}, true},
		{"workers", "easy", Config{Workers: 2, Epochs: 2, MiniBatches: 2}, false},
		// Untrained episodes of the default preset run to the step limit
		// and all fail; dense labels give them advantages.
		{"alfworld-dense", "alfworld", Config{Rewards: RewardDense, Epochs: 2}, true},
		{"alfworld-ppo-dense", "alfworld", Config{Algo: PPO, Rewards: RewardDense, Swap: SwapConfig{Weight: 0.3}}, false},
	}
	var buf bytes.Buffer
	for _, c := range cases {
		env, err := envs.New("household", map[string]string{"preset": c.preset})
		if err != nil {
			t.Fatal(err)
		}
		tasks, err := env.Tasks(envs.SplitTrain, 4, 3)
		if err != nil {
			t.Fatal(err)
		}
		p, err := policy.New(policy.Config{Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		explorer, err := policy.New(policy.Config{Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		tr := newTrainer(t, p, c.cfg)
		for u := range 3 {
			on := collect(t, env, tasks, p, 4, int64(u+1), schemas.SourceOnPolicy)
			var off []*schemas.Trajectory
			if c.off {
				off = collect(t, env, tasks[:2], explorer, 2, int64(u+10), schemas.SourceExplore)
			}
			if c.cfg.Rewards == RewardDense {
				labelDense(on)
				labelDense(off)
			}
			st, err := tr.Update(on, off)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&buf, "%s/%d rollouts %s off %s stats %s params %s\n", c.name, u,
				policytest.TrajectoryHash(on), policytest.TrajectoryHash(off), statsHash(st), paramHash(p))
		}
		fmt.Fprintf(&buf, "%s/trained rollouts %s\n", c.name, policytest.TrajectoryHash(collect(t, env, tasks, p, 2, 99, schemas.SourceOnPolicy)))
	}
	path := filepath.Join("testdata", "updates.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("training differs from %s (%v):\ngot\n%s\nwant\n%s", path, err, buf.String(), want)
	}
}

// labelDense gives every step a made-up dense reward that prefers early
// admissible actions.
func labelDense(ts []*schemas.Trajectory) {
	for _, t := range ts {
		for i := range t.Steps {
			st := &t.Steps[i]
			st.DenseReward = 1 / float64(1+st.ActionIndex+st.NumAdmissible%3)
		}
	}
}
