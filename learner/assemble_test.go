package learner

import (
	"errors"
	"fmt"
	"testing"

	"github.com/rspo-dev/rspo/schemas"
)

// splitCase is a batch of on- and off-policy rollouts of the courier.
func splitCase(t *testing.T, seed int64) (on, off []*schemas.Trajectory) {
	t.Helper()
	env, tasks := courierTasks(t, 3, seed)
	p := smallPolicy(t, 7)
	return collect(t, env, tasks, p, 4, seed, schemas.SourceOnPolicy), collect(t, env, tasks[:2], p, 2, seed+50, schemas.SourceExplore)
}

// TestAssembleApplyIsUpdate checks that Update and Assemble followed by
// Apply — in the same trainer, and through the wire form on a second
// trainer — leave bit-identical policies and figures, update after update.
func TestAssembleApplyIsUpdate(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"grpo", Config{}},
		{"gigpo-old-ratio", Config{Algo: GiGPO, OffRatio: OffRatioOld, EntropyCoef: 0.01, Epochs: 2}},
		{"grpo-swap-workers", Config{Swap: SwapConfig{Weight: 0.5}, Workers: 2}},
		// The swap term's partners and the minibatch shuffles share one
		// random source: the batch carries it to the applying trainer, and
		// the assembler takes it back from the trainer's state.
		{"gigpo-swap-minibatches", Config{Algo: GiGPO, Swap: SwapConfig{Weight: 0.5, Partners: PartnersKNN}, MiniBatches: 2, Epochs: 2}},
		{"ppo", Config{Algo: PPO, Epochs: 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			whole, err := New(smallPolicy(t, 3), c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			split, _ := New(smallPolicy(t, 3), c.cfg)
			wire, _ := New(smallPolicy(t, 3), c.cfg)
			assembler, _ := New(smallPolicy(t, 3), c.cfg) // assembles only, as an external-trainer learner does
			for u := range int64(3) {
				on, off := splitCase(t, 10+u)
				want, err := whole.Update(on, off)
				if err != nil {
					t.Fatal(err)
				}
				b, err := split.Assemble(on, off)
				if err != nil {
					t.Fatal(err)
				}
				got, err := split.Apply(b)
				if err != nil {
					t.Fatal(err)
				}
				if statsHash(got) != statsHash(want) || paramHash(split.Policy()) != paramHash(whole.Policy()) {
					t.Fatalf("update %d: Assemble+Apply gives %+v, Update %+v", u+1, got, want)
				}
				if _, err := split.Apply(b); !errors.Is(err, ErrBatch) {
					t.Fatalf("applying a batch twice: got %v, want ErrBatch", err)
				}
				ab, err := assembler.Assemble(on, off)
				if err != nil {
					t.Fatal(err)
				}
				w, err := ab.Export("r1", u)
				if c.cfg.Algo == PPO {
					if !errors.Is(err, ErrNotPortable) {
						t.Fatalf("exporting a PPO batch: got %v, want ErrNotPortable", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				enc, err := schemas.EncodeTrainBatch(w)
				if err != nil {
					t.Fatal(err)
				}
				dec, err := schemas.DecodeTrainBatch(enc)
				if err != nil {
					t.Fatal(err)
				}
				ib, err := wire.Import(dec)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := wire.Apply(ib); err != nil {
					t.Fatal(err)
				}
				if paramHash(wire.Policy()) != paramHash(whole.Policy()) {
					t.Fatalf("update %d: the policy trained from the wire batch differs from Update's", u+1)
				}
				state, err := wire.MarshalState() // stored beside the version; the learner's assembler resumes from it
				if err != nil {
					t.Fatal(err)
				}
				if err := assembler.RestoreState(state); err != nil {
					t.Fatal(err)
				}
				if bs := ab.Stats(); bs.AdvMeanOn != want.AdvMeanOn || bs.SuccessOff != want.SuccessOff || bs.SwapPairs != want.SwapPairs {
					t.Fatalf("update %d: batch figures %+v, Update's %+v", u+1, bs, want)
				}
			}
		})
	}
}

// TestImportRefuses checks the batches a trainer must not apply.
func TestImportRefuses(t *testing.T) {
	on, off := splitCase(t, 20)
	asm, _ := New(smallPolicy(t, 3), Config{})
	b, err := asm.Assemble(on, off)
	if err != nil {
		t.Fatal(err)
	}
	w, err := b.Export("r1", 0)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		cfg   Config
		edit  func(*schemas.TrainBatch)
		valid bool
	}{
		{"as exported", Config{}, func(*schemas.TrainBatch) {}, true},
		{"other clip", Config{EpsOn: 0.3}, func(*schemas.TrainBatch) {}, false},
		{"other version", Config{}, func(w *schemas.TrainBatch) { w.Update, w.PolicyVersion = 5, 4 }, false},
		{"swap on off-policy step", Config{}, func(w *schemas.TrainBatch) { w.Steps[len(w.Steps)-1].SwapCoef = 1 }, false},
		{"group out of order", Config{}, func(w *schemas.TrainBatch) {
			for i := range w.Steps {
				if w.Steps[i].TrajectoryID == w.Steps[0].TrajectoryID {
					w.Steps[i].NormGroup = 1
				}
			}
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, _ := New(smallPolicy(t, 3), c.cfg)
			cp := *w
			cp.Steps = append([]schemas.BatchStep(nil), w.Steps...)
			c.edit(&cp)
			_, err := tr.Import(&cp)
			if c.valid != (err == nil) {
				t.Fatalf("Import: got %v, want valid=%v", err, c.valid)
			}
			if err != nil && !errors.Is(err, ErrBatch) {
				t.Fatalf("got %v, want ErrBatch", err)
			}
		})
	}
}

// TestAssembleExportsWhatOnlyAnotherTrainerCanRead: an LLM policy's
// trajectories (free-text actions, no admissible list, token log-probs)
// are assembled and exported with their advantages; the built-in policy
// refuses to apply them and stays unchanged.
func TestAssembleExportsWhatOnlyAnotherTrainerCanRead(t *testing.T) {
	var on []*schemas.Trajectory
	for i, success := range []bool{true, false, false} {
		tr := fakeTrajectory(fmt.Sprintf("llm-%d", i), "t1", "g1", success, 2)
		for j := range tr.Steps {
			tr.Steps[j].Admissible, tr.Steps[j].ActionIndex = nil, -1
			tr.Steps[j].Action = "open the drawer and look inside"
			tr.Steps[j].TokenIDs, tr.Steps[j].TokenLogProbs = []int32{11, 12}, []float32{-0.5, -0.25}
		}
		on = append(on, tr)
	}
	tr, _ := New(smallPolicy(t, 3), Config{})
	before := paramHash(tr.Policy())
	b, err := tr.Assemble(on, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := b.Export("r1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Steps[0]; got.Advantage <= 0 || got.ActionIndex != -1 || len(got.TokenIDs) != 2 || got.Weight != 1.0/6 {
		t.Fatalf("first row %+v: want the success's positive advantage, the free-text action, its tokens, weight 1/6", got)
	}
	if _, err := tr.Apply(b); !errors.Is(err, ErrBatch) {
		t.Fatalf("Apply: got %v, want ErrBatch", err)
	}
	if _, err := tr.Update(on, nil); !errors.Is(err, ErrBatch) {
		t.Fatalf("Update: got %v, want ErrBatch", err)
	}
	if paramHash(tr.Policy()) != before || tr.Policy().Version() != 0 {
		t.Fatal("a refused batch changed the policy")
	}
}
