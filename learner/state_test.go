package learner

import (
	"errors"
	"testing"

	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
)

// TestRestoreStateResumesExactly: a learner that stops after two updates
// and restarts from (policy snapshot, trainer state) makes the same third
// update as one that never stopped — with minibatch shuffling, several
// epochs, the KL to the original reference and the swap term all in play.
func TestRestoreStateResumesExactly(t *testing.T) {
	env, tasks := courierTasks(t, 3, 11)
	cfg := Config{Epochs: 2, MiniBatches: 2, Beta: 0.05, Swap: SwapConfig{Weight: 0.1}}
	batches := make([][]*schemas.Trajectory, 3)
	for i := range batches {
		batches[i] = collect(t, env, tasks, smallPolicy(t, int64(i+1)), 4, int64(i), schemas.SourceOnPolicy)
	}
	p := smallPolicy(t, 1)
	tr := newTrainer(t, p, cfg)
	for _, b := range batches[:2] {
		if _, err := tr.Update(b, nil); err != nil {
			t.Fatal(err)
		}
	}
	snap, _ := p.MarshalBinary()
	state, err := tr.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Update(batches[2], nil); err != nil {
		t.Fatal(err)
	}
	want, _ := p.MarshalBinary()

	q, err := policy.Load(snap)
	if err != nil {
		t.Fatal(err)
	}
	resumed := newTrainer(t, q, cfg)
	if err := resumed.RestoreState(state); err != nil {
		t.Fatal(err)
	}
	if resumed.Updates() != 2 {
		t.Fatalf("got %d updates, want 2", resumed.Updates())
	}
	if _, err := resumed.Update(batches[2], nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := q.MarshalBinary(); string(got) != string(want) {
		t.Fatal("resumed update differs from the uninterrupted one")
	}
}

func TestRestoreStateErrors(t *testing.T) {
	tr := newTrainer(t, smallPolicy(t, 1), Config{})
	good, _ := tr.MarshalState()
	other, _ := newTrainer(t, func() *policy.Policy {
		p, _ := policy.New(policy.Config{Buckets: 512, EmbedDim: 3, Hidden: 4})
		return p
	}(), Config{}).MarshalState()
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)/2] ^= 1
	tests := []struct {
		name string
		in   []byte
		also error
	}{
		{name: "empty", in: nil},
		{name: "foreign", in: []byte("RSPOPOL\x00 a policy snapshot, not a trainer state")},
		{name: "flipped bit", in: flipped},
		{name: "truncated", in: good[:len(good)-9]},
		{name: "other shape", in: other, also: policy.ErrShape},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tr.RestoreState(tt.in)
			if !errors.Is(err, ErrState) || tt.also != nil && !errors.Is(err, tt.also) {
				t.Fatalf("got %v, want ErrState %v", err, tt.also)
			}
		})
	}
	if err := tr.RestoreState(good); err != nil {
		t.Fatalf("good state: %v", err)
	}
}

func FuzzRestoreState(f *testing.F) {
	tr := newTrainer(f, smallPolicy(f, 1), Config{})
	good, _ := tr.MarshalState()
	f.Add(good)
	f.Add(good[:20])
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := tr.RestoreState(b); err != nil && !errors.Is(err, ErrState) {
			t.Fatalf("error %v does not match ErrState", err)
		}
	})
}
