package main

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// The explorer's settings are the learner's: set only on `serve learner`,
// they must reach an explorer process started with nothing but --run. A
// tilted explorer records log q, q ∝ π_θ·exp(λ·r̂), as the behaviour
// log-prob of every step; an untilted one would record log π_θ.
func TestLearnerExplorerSettingsReachTheExplorerProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every stage as a process; skipped with -short")
	}
	c := startStages(t, "tilted")
	const lambda = 10.0
	model := prm.Random(3)
	prmFile := filepath.Join(c.dir, "random.prm")
	if err := prm.SaveFile(prmFile, model); err != nil {
		t.Fatal(err)
	}
	args := append(c.learnerArgs(4), "--prm", prmFile, "--explore-tilt", "10")
	if out, err := exec.CommandContext(c.ctx, c.bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("learner: %v\n%s", err, out)
	}
	var checked, tiltedAway int
	err := streams.Replay(c.ctx, c.js, streams.ReplayOptions{Run: c.run, Subject: streams.KindTrajExplore}, func(m streams.Message) error {
		tr := m.Trajectory
		if tr == nil || len(tr.Steps) == 0 {
			t.Fatalf("explorer message %d: %v", m.Seq, m.Err)
		}
		behaviour, untilted := firstStepLogProbs(t, c, tr, model, lambda)
		if math.Abs(tr.Steps[0].BehaviorLogProb-behaviour) > 1e-9 {
			t.Errorf("%s: behaviour log-prob %v, want the tilted log q = %v (log π_θ = %v)",
				tr.ID, tr.Steps[0].BehaviorLogProb, behaviour, untilted)
		}
		if math.Abs(behaviour-untilted) > 1e-3 {
			tiltedAway++
		}
		checked++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 || tiltedAway == 0 {
		t.Fatalf("checked %d explorer trajectories, %d where the tilt changed the log-prob; want some of each", checked, tiltedAway)
	}
}

// firstStepLogProbs recomputes the first step's log-prob of its action
// under π_θ of the trajectory's policy version, tilted by model with λ and
// untilted.
func firstStepLogProbs(t *testing.T, c *stageCluster, tr *schemas.Trajectory, model *prm.Model, lambda float64) (tilted, untilted float64) {
	t.Helper()
	b, err := streams.GetSnapshot(c.ctx, c.js, streams.BucketPolicy, streams.PolicyObject(c.run, tr.PolicyVersion))
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	s := tr.Steps[0]
	_, logp, err := p.Distribution(&policy.State{Instruction: tr.Instruction, Observation: s.Observation, Admissible: s.Admissible})
	if err != nil {
		t.Fatal(err)
	}
	scores := make([]float64, len(s.Admissible))
	model.ScoreActions(tr.Instruction, s.Observation, s.Admissible, scores)
	q := make([]float64, len(logp))
	for i := range q {
		q[i] = logp[i] + lambda*scores[i]
	}
	logZ := logSumExp(q)
	a := s.ActionIndex
	return q[a] - logZ, logp[a]
}

func logSumExp(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	var sum float64
	for _, x := range v {
		sum += math.Exp(x - m)
	}
	return m + math.Log(sum)
}

// A flag a stage does not use fails, naming the flag and where the setting
// belongs, before anything connects.
func TestServeStagesRefuseFlagsTheyDoNotUse(t *testing.T) {
	cfgFile := filepath.Join(t.TempDir(), "run.json")
	if err := os.WriteFile(cfgFile, []byte(`{"actors": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"explorer tilt", []string{"serve", "explorer", "--run", "r", "--tilt", "10"}, []string{"--tilt", "serve learner"}},
		{"explorer mode", []string{"serve", "explorer", "--run", "r", "--explorer", "frozen"}, []string{"--explorer", "plan"}},
		{"explorer noise", []string{"serve", "explorer", "--run", "r", "--prm-noise", "0.1"}, []string{"--prm-noise"}},
		{"learner actors", []string{"serve", "learner", "--run", "r", "--actors", "2"}, []string{"--actors", "its own"}},
		{"actor ack wait 0", []string{"serve", "actor", "--run", "r", "--ack-wait", "0s"}, []string{"--ack-wait 0s"}},
		{"explorer ack wait 0", []string{"serve", "explorer", "--run", "r", "--ack-wait", "0s"}, []string{"--ack-wait 0s"}},
		{"explorer step budget 0", []string{"serve", "explorer", "--run", "r", "--step-budget", "0"}, []string{"--step-budget 0"}},
		{"explorer shard budget -1", []string{"serve", "explorer", "--run", "r", "--shard-budget", "-1"}, []string{"--shard-budget -1"}},
		{"learner actors in config", []string{"serve", "learner", "--run", "r", "--config", cfgFile}, []string{`"actors"`, "serve actor"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runRspo(testContext(t), append(tt.args, "--nats", "nats://127.0.0.1:1")...)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}
