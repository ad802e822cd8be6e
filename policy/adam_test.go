package policy

import (
	"errors"
	"testing"
)

// trainSteps applies n Adam steps of a fixed loss to p.
func trainSteps(t testing.TB, p *Policy, o *Adam, n int) {
	t.Helper()
	f, err := p.NewFeaturizer().Features(testState())
	if err != nil {
		t.Fatal(err)
	}
	g := p.NewGrads()
	for range n {
		var ps Pass
		p.Forward(f, &ps)
		d := make([]float64, len(ps.LogProbs))
		AddLogProbGrad(d, ps.LogProbs, 2, -1)
		g.Zero()
		if err := p.Backward(&ps, d, ps.Value-1, g); err != nil {
			t.Fatal(err)
		}
		if err := o.Step(p, g); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAdamLearnsAndLeavesUnusedRows(t *testing.T) {
	p := newTestPolicy(t, Config{Buckets: 512})
	fresh := p.Clone()
	o, err := NewAdam(p, AdamConfig{LR: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	_, before, _ := p.Distribution(testState())
	trainSteps(t, p, o, 20)
	_, after, _ := p.Distribution(testState())
	if !(after[2] > before[2]+0.5) {
		t.Fatalf("log-prob of the rewarded action went %v → %v, want a clear rise", before[2], after[2])
	}
	changed := 0
	for r := int32(0); r < int32(p.lay.buckets); r++ {
		row := p.params[p.lay.emb(r) : p.lay.emb(r)+p.lay.row]
		same := true
		for i, v := range row {
			same = same && v == fresh.params[p.lay.emb(r)+i]
		}
		if !same {
			changed++
			if !p.touched.has(r) {
				t.Fatalf("row %d changed but is not marked touched: snapshots would lose it", r)
			}
		}
	}
	if changed == 0 || changed == p.lay.buckets {
		t.Fatalf("got %d of %d rows changed, want some but not all", changed, p.lay.buckets)
	}
}

// TestAdamStateResumes: saving and restoring the optimiser continues the
// run exactly as if it had never stopped.
func TestAdamStateResumes(t *testing.T) {
	p := newTestPolicy(t, Config{Buckets: 512})
	o, _ := NewAdam(p, AdamConfig{LR: 0.02})
	trainSteps(t, p, o, 3)
	state, err := o.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := p.MarshalBinary()
	trainSteps(t, p, o, 3)
	want, _ := p.MarshalBinary()

	q, err := Load(snap)
	if err != nil {
		t.Fatal(err)
	}
	o2, err := LoadAdam(q, state)
	if err != nil {
		t.Fatal(err)
	}
	trainSteps(t, q, o2, 3)
	got, _ := q.MarshalBinary()
	if string(got) != string(want) {
		t.Fatal("resumed run differs from the uninterrupted one")
	}
	other := newTestPolicy(t, Config{Buckets: 1024})
	if _, err := LoadAdam(other, state); !errors.Is(err, ErrShape) || !errors.Is(err, ErrSnapshot) {
		t.Fatalf("other shape: got %v, want ErrShape", err)
	}
	state[len(state)/2] ^= 4
	if _, err := LoadAdam(q, state); !errors.Is(err, ErrSnapshotChecksum) {
		t.Fatalf("flipped bit: got %v, want ErrSnapshotChecksum", err)
	}
}

func FuzzLoadAdam(f *testing.F) {
	p := newTestPolicy(f, Config{Buckets: 256, EmbedDim: 2, Hidden: 2})
	o, _ := NewAdam(p, AdamConfig{})
	trainSteps(f, p, o, 2)
	good, _ := o.MarshalBinary()
	f.Add(good)
	f.Add(good[:40])
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := LoadAdam(p, b)
		if err != nil {
			if !errors.Is(err, ErrSnapshot) {
				t.Fatalf("error %v does not match ErrSnapshot", err)
			}
			return
		}
		out, _ := o.MarshalBinary()
		if string(out) != string(b) {
			t.Fatal("accepted optimiser state does not round-trip")
		}
	})
}
