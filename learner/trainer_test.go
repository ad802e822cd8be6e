package learner

import (
	"errors"
	"math"
	"testing"

	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
)

func newTrainer(t testing.TB, p *policy.Policy, cfg Config) *Trainer {
	t.Helper()
	tr, err := New(p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		field string
	}{
		{name: "defaults", cfg: Config{}},
		{name: "ppo", cfg: Config{Algo: PPO}},
		{name: "unknown algo", cfg: Config{Algo: "a2c"}, field: "Algo"},
		{name: "unknown rewards", cfg: Config{Rewards: "prm"}, field: "Rewards"},
		{name: "alpha one", cfg: Config{Alpha: 1}, field: "Alpha"},
		{name: "negative eps", cfg: Config{EpsOn: -0.2}, field: "EpsOn"},
		{name: "negative beta", cfg: Config{Beta: -2}, field: "Beta"},
		{name: "no KL", cfg: Config{Beta: NoKL}},
		{name: "epochs", cfg: Config{Epochs: -1}, field: "Epochs"},
		{name: "gamma above one", cfg: Config{Gamma: 1.5}, field: "Gamma"},
		{name: "NaN lambda", cfg: Config{Lambda: math.NaN()}, field: "Lambda"},
		{name: "fallback", cfg: Config{OffPolicyFallback: "ignore"}, field: "OffPolicyFallback"},
		{name: "off ratio", cfg: Config{OffRatio: "current"}, field: "OffRatio"},
		{name: "off ratio old", cfg: Config{OffRatio: OffRatioOld}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			var ce *ConfigError
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("got %v, want nil", err)
			case tt.field != "" && (!errors.As(err, &ce) || ce.Field != tt.field || !errors.Is(err, ErrConfig)):
				t.Fatalf("got %v, want a ConfigError on %s", err, tt.field)
			}
		})
	}
}

func TestBatchErrors(t *testing.T) {
	good := fakeTrajectory("g", "task", "grp", true, 2)
	mod := func(fn func(tr *schemas.Trajectory)) *schemas.Trajectory {
		tr := fakeTrajectory("bad", "task", "grp", false, 2)
		fn(tr)
		return tr
	}
	tests := []struct {
		name    string
		on, off []*schemas.Trajectory
		rewards RewardSource
	}{
		{name: "empty batch"},
		{name: "no steps", on: []*schemas.Trajectory{good, mod(func(tr *schemas.Trajectory) { tr.Steps = nil })}},
		{name: "index elsewhere", on: []*schemas.Trajectory{good, mod(func(tr *schemas.Trajectory) { tr.Steps[1].ActionIndex = 0 })}},
		{name: "positive log-prob", on: []*schemas.Trajectory{good, mod(func(tr *schemas.Trajectory) { tr.Steps[0].BehaviorLogProb = 0.5 })}},
		{name: "NaN reward", on: []*schemas.Trajectory{good, mod(func(tr *schemas.Trajectory) { tr.Steps[0].Reward = math.NaN() })}},
		{name: "unswapped explorer data", off: []*schemas.Trajectory{mod(func(tr *schemas.Trajectory) { tr.Source = schemas.SourceExplore })}},
		{name: "NaN dense reward", rewards: RewardDense, on: []*schemas.Trajectory{mod(func(tr *schemas.Trajectory) { tr.Steps[1].DenseReward = math.Inf(1) })}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := smallPolicy(t, 1)
			before, _ := p.MarshalBinary()
			tr := newTrainer(t, p, Config{Rewards: tt.rewards})
			_, err := tr.Update(tt.on, tt.off)
			if !errors.Is(err, ErrBatch) {
				t.Fatalf("got %v, want ErrBatch", err)
			}
			after, _ := p.MarshalBinary()
			if string(before) != string(after) || tr.Updates() != 0 {
				t.Fatal("a failed update changed the policy")
			}
		})
	}
}

// TestNoOffPolicyIsBaseAlgorithm: without buffer data α plays no part and
// the update equals the base algorithm's.
func TestNoOffPolicyIsBaseAlgorithm(t *testing.T) {
	env, tasks := courierTasks(t, 3, 1)
	for _, algo := range []Algo{GRPO, PPO, GiGPO} {
		t.Run(string(algo), func(t *testing.T) {
			batch := collect(t, env, tasks, smallPolicy(t, 2), 6, 1, schemas.SourceOnPolicy)
			var snaps []string
			for _, alpha := range []float64{0.125, 0.5, 0.9} {
				p := smallPolicy(t, 2)
				if _, err := newTrainer(t, p, Config{Algo: algo, Alpha: alpha, Epochs: 2}).Update(batch, nil); err != nil {
					t.Fatal(err)
				}
				b, _ := p.MarshalBinary()
				snaps = append(snaps, string(b))
			}
			if snaps[0] != snaps[1] || snaps[1] != snaps[2] {
				t.Fatal("α changed an update that had no off-policy data")
			}
		})
	}
}

// TestOffPolicyAsOnPolicyWhenBehaviourIsOld: buffer data produced by the
// current policy (π_B = π_old, c = 1) with ε_off = ε_on trains exactly
// like the same data given as on-policy.
func TestOffPolicyAsOnPolicyWhenBehaviourIsOld(t *testing.T) {
	env, tasks := courierTasks(t, 2, 3)
	batch := collect(t, env, tasks, smallPolicy(t, 4), 5, 2, schemas.SourceOnPolicy)
	run := func(on, off []*schemas.Trajectory) (string, UpdateStats) {
		p := smallPolicy(t, 4)
		st, err := newTrainer(t, p, Config{EpsOff: 0.2, Epochs: 3, LR: 0.05}).Update(on, off)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := p.MarshalBinary()
		return string(b), st
	}
	a, sa := run(batch, nil)
	b, sb := run(nil, batch)
	if a != b {
		t.Fatalf("off-policy copy trained differently: on stats %+v, off stats %+v", sa, sb)
	}
	if sb.CMeanOff != 1 {
		t.Fatalf("got mean c %v, want exactly 1", sb.CMeanOff)
	}
}

// TestBufferSuccessJoinsFailingGroup is the case RSPO is built for: an
// all-fail on-policy group gets a signal from a swapped-in success.
func TestBufferSuccessJoinsFailingGroup(t *testing.T) {
	var on []*schemas.Trajectory
	for i := range 4 {
		on = append(on, fakeTrajectory(string(rune('a'+i)), "task", "grp", false, 2))
	}
	off := []*schemas.Trajectory{fakeTrajectory("buf", "task", "", true, 2)}
	off[0].Source, off[0].Swapped = schemas.SourceExplore, true
	tr := newTrainer(t, smallPolicy(t, 1), Config{})
	samples, err := tr.prepare(on, off)
	if err != nil {
		t.Fatal(err)
	}
	groups := groupSamples(samples)
	tr.oldPass(samples)
	tr.assignAdvantages(samples, groups)
	if len(groups) != 1 {
		t.Fatalf("got %d groups, want 1", len(groups))
	}
	want, _, _ := Normalize([]float64{0, 0, 0, 0, 1}, 0, 1e-6)
	for i, s := range samples {
		if !near(s.adv[0], want[i], 1e-12) || s.adv[0] != s.adv[1] {
			t.Fatalf("sample %d: got advantages %v, want %v at every step", i, s.adv, want[i])
		}
	}
	st, err := newTrainer(t, smallPolicy(t, 1), Config{}).Update(on, nil)
	if err != nil || st.AllFailFracOn != 1 || st.ZeroAdvGroupFrac != 1 {
		t.Fatalf("on-policy alone: got %+v %v, want an all-fail group with zero advantages", st, err)
	}
}

func TestOffPolicyFallback(t *testing.T) {
	on := []*schemas.Trajectory{
		fakeTrajectory("a", "t1", "g1", false, 1), fakeTrajectory("b", "t1", "g1", false, 1),
		fakeTrajectory("c", "t1", "g1", true, 1), fakeTrajectory("d", "t1", "g1", false, 1),
	}
	off := []*schemas.Trajectory{fakeTrajectory("x", "t2", "", true, 1)}
	tests := []struct {
		name     Fallback
		positive bool
	}{
		{name: FallbackBatch, positive: true},
		{name: FallbackDrop, positive: false},
	}
	for _, tt := range tests {
		t.Run(string(tt.name), func(t *testing.T) {
			st, err := newTrainer(t, smallPolicy(t, 1), Config{OffPolicyFallback: tt.name}).Update(on, off)
			if err != nil {
				t.Fatal(err)
			}
			if st.OffFallback != 1 || (st.AdvMeanOff > 0) != tt.positive {
				t.Fatalf("got fallback %v off advantage %v, want 1 and positive=%v", st.OffFallback, st.AdvMeanOff, tt.positive)
			}
		})
	}
}

func TestFirstEpochRatioIsOneAndEpochsClip(t *testing.T) {
	env, tasks := courierTasks(t, 4, 5)
	p := smallPolicy(t, 6)
	batch := collect(t, env, tasks, p, 8, 3, schemas.SourceOnPolicy)
	st, err := newTrainer(t, p.Clone(), Config{Beta: NoKL}).Update(batch, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.RatioMeanOn != 1 || st.ClipFracOn != 0 {
		t.Fatalf("one epoch: got ratio %v clip fraction %v, want exactly 1 and 0", st.RatioMeanOn, st.ClipFracOn)
	}
	st, err = newTrainer(t, p.Clone(), Config{Epochs: 8, LR: 0.2, MiniBatches: 2, Beta: NoKL}).Update(batch, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !(st.ClipFracOn > 0) || st.KLOn <= 0 {
		t.Fatalf("eight epochs at a high rate: got clip fraction %v KL %v, want both > 0", st.ClipFracOn, st.KLOn)
	}
}

func TestDenseRewards(t *testing.T) {
	a := fakeTrajectory("a", "t", "g", false, 2)
	b := fakeTrajectory("b", "t", "g", false, 2)
	a.Steps[0].DenseReward, b.Steps[1].DenseReward = 0.3, 0.1
	for _, tr := range []*schemas.Trajectory{a, b} {
		tr.Source = schemas.SourceExplore // dense data need not be swapped
	}
	st, err := newTrainer(t, smallPolicy(t, 1), Config{Rewards: RewardDense}).Update([]*schemas.Trajectory{a, b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !near(st.ReturnMeanOn, 0.2, 1e-12) || st.ZeroAdvGroupFrac != 0 {
		t.Fatalf("got mean return %v zero-advantage fraction %v, want 0.2 and 0", st.ReturnMeanOn, st.ZeroAdvGroupFrac)
	}
	st, err = newTrainer(t, smallPolicy(t, 1), Config{Rewards: RewardDense, MinGroupStd: 0.5}).Update([]*schemas.Trajectory{a, b}, nil)
	if err != nil || st.ZeroAdvGroupFrac != 1 {
		t.Fatalf("min group std 0.5 over returns 0.3/0.1: got zero-advantage fraction %v (%v), want 1", st.ZeroAdvGroupFrac, err)
	}
}

func TestGiGPOStepAdvantages(t *testing.T) {
	// Two rollouts pass through the same first state; only one succeeds.
	a := fakeTrajectory("a", "t", "g", true, 2)
	b := fakeTrajectory("b", "t", "g", false, 2)
	b.Steps[1].StateKey = 99 // diverges at the second step
	tr := newTrainer(t, smallPolicy(t, 1), Config{Algo: GiGPO, Gamma: 0.5})
	samples, err := tr.prepare([]*schemas.Trajectory{a, b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	groups := groupSamples(samples)
	tr.oldPass(samples)
	tr.assignAdvantages(samples, groups)
	// Episode advantages ±1; the shared first state has returns 0.5 and 0 → ±1;
	// the second states are alone → 0.
	want := [][]float64{{2, 1}, {-2, -1}}
	for i, s := range samples {
		for j := range s.adv {
			if !near(s.adv[j], want[i][j], 1e-4) {
				t.Fatalf("got %v %v, want %v", samples[0].adv, samples[1].adv, want)
			}
		}
	}
}

// TestWorkers: sharing an update over goroutines gives the same update up
// to rounding, and is itself deterministic.
func TestWorkers(t *testing.T) {
	env, tasks := courierTasks(t, 4, 13)
	on := collect(t, env, tasks, smallPolicy(t, 7), 6, 1, schemas.SourceOnPolicy)
	off := collect(t, env, tasks[:2], smallPolicy(t, 8), 3, 2, schemas.SourceExplore)
	run := func(workers int) (*policy.Policy, UpdateStats) {
		p := smallPolicy(t, 7)
		st, err := newTrainer(t, p, Config{Algo: PPO, Workers: workers, Epochs: 2, MiniBatches: 2}).Update(on, off)
		if err != nil {
			t.Fatal(err)
		}
		return p, st
	}
	one, st1 := run(1)
	three, st3 := run(3)
	again, _ := run(3)
	b3, _ := three.MarshalBinary()
	bAgain, _ := again.MarshalBinary()
	if string(b3) != string(bAgain) {
		t.Fatal("two runs with 3 workers differ")
	}
	for i := range one.NumParams() {
		if a, b := one.Param(i), three.Param(i); math.Abs(a-b) > 1e-9*max(1, math.Abs(a)) {
			t.Fatalf("param %d: 1 worker %v, 3 workers %v", i, a, b)
		}
	}
	if math.Abs(st1.Loss-st3.Loss) > 1e-9 || st1.OnSteps != st3.OnSteps || math.Abs(st1.KLOff-st3.KLOff) > 1e-9 {
		t.Fatalf("stats differ: %+v vs %+v", st1, st3)
	}
}

// A buffer success whose actions π_B made much likelier than π_θ does is
// learnt from at weight ≈ π_θ/π_B under eq. 4, and at full weight with
// OffRatioOld: the off-policy term's gradient is about π_B/π_θ ≈ 3 times
// larger. (Compared on the gradient: Adam's first step is scale-free.)
func TestOffRatioOldLearnsFromUnlikelyBufferActionsAtFullWeight(t *testing.T) {
	var on []*schemas.Trajectory
	for i := range 4 {
		on = append(on, fakeTrajectory(string(rune('a'+i)), "task", "grp", false, 2))
	}
	offGrad := func(ratio OffRatio) float64 {
		off := fakeTrajectory("buf", "task", "", true, 2)
		off.Source, off.Swapped = schemas.SourceExplore, true
		for i := range off.Steps { // π_B all but certain of "take", π_θ ≈ 1/3
			off.Steps[i].Action, off.Steps[i].ActionIndex, off.Steps[i].BehaviorLogProb = "take coin 1 from room 2", 1, math.Log(0.99)
		}
		p := smallPolicy(t, 1)
		tr := newTrainer(t, p, Config{OffRatio: ratio, Beta: NoKL})
		samples, err := tr.prepare(on, []*schemas.Trajectory{off})
		if err != nil {
			t.Fatal(err)
		}
		tr.oldPass(samples)
		tr.assignAdvantages(samples, groupSamples(samples))
		g := p.NewGrads()
		tr.accumulate(samples, nil, []int{len(samples) - 1}, g, &accum{})
		return g.Norm()
	}
	gb, gOld := offGrad(OffRatioBehaviour), offGrad(OffRatioOld)
	t.Logf("off-policy gradient norm: behaviour ratio %.4g, old ratio %.4g", gb, gOld)
	if !(gb > 0) || !(gOld > 2*gb) {
		t.Fatalf("off-policy gradient norm with the behaviour ratio %v, with the old ratio %v: want both positive and the latter ≥ 2× larger", gb, gOld)
	}
}
