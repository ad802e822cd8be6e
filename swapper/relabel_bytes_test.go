package swapper

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rspo-dev/rspo/internal/fuzzcorpus"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/swapper/swappertest"
)

// relabelCases are explorer trajectories of many shapes: the golden
// counter episodes and synthetic trajectories of 1 to 300 steps, some with
// dense labels only in Reward (which Relabel moves to DenseReward).
func relabelCases(t *testing.T) []*schemas.Trajectory {
	ts := []*schemas.Trajectory{
		swappertest.PlayCounter(t, 2, "inc", "dec", "inc", "inc", "stop"),
		swappertest.PlayCounter(t, 3, "inc", "stop"),
		swappertest.PlayCounter(t, 1, "inc", "dec", "inc", "dec", "inc", "dec", "inc", "dec"),
		swappertest.PlayCounter(t, 0, "stop"),
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 150 {
		tr := swappertest.Explorer("r", int64(i%3), i, 1+rng.IntN(300))
		if i%4 == 0 {
			for j := range tr.Steps {
				tr.Steps[j].DenseReward = 0
			}
		}
		ts = append(ts, tr)
	}
	return ts
}

// TestRelabelInBytes: the explorer message relabelled in its bytes
// (schemas.PatchLabels) decodes to Relabel of the trajectory, field for
// field, and is byte for byte the encoding of the relabelled trajectory.
func TestRelabelInBytes(t *testing.T) {
	for i, tr := range relabelCases(t) {
		msg := swappertest.Encode(tr)
		want, err := Relabel(tr)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		got, err := schemas.PatchLabels(msg, want)
		if err != nil {
			t.Fatalf("case %d: PatchLabels: %v", i, err)
		}
		dec, err := schemas.DecodeTrajectory(got)
		if err != nil {
			t.Fatalf("case %d: decode the patched message: %v", i, err)
		}
		wantDec, err := schemas.DecodeTrajectory(swappertest.Encode(want))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(dec, wantDec) {
			t.Errorf("case %d (%d steps): decodes to\n%+v\nwant\n%+v", i, len(tr.Steps), dec, wantDec)
		}
		if !bytes.Equal(got, swappertest.Encode(want)) {
			t.Errorf("case %d: the patched message differs from the encoding of Relabel's result", i)
		}
	}
}

// FuzzRelabelInBytes relabels arbitrary messages in their bytes as the
// swapper does: decode, Relabel, PatchLabels. It must never panic, and a
// patched message must decode to exactly Relabel of the decoded input. The
// seed corpus is in testdata/fuzz/FuzzRelabelInBytes (go test ./swapper
// -update rewrites it). Run with:
// go test ./swapper -run '^$' -fuzz FuzzRelabelInBytes
func FuzzRelabelInBytes(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := schemas.DecodeTrajectory(b)
		if err != nil {
			return
		}
		want, err := Relabel(tr)
		if err != nil {
			return
		}
		out, err := schemas.PatchLabels(b, want)
		if err != nil {
			if !errors.Is(err, schemas.ErrNotPatchable) {
				t.Fatalf("Relabel's result refused with %v", err)
			}
			return
		}
		got, err := schemas.DecodeTrajectory(out)
		if err != nil {
			t.Fatalf("the patched message does not decode: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("the patched message decodes to\n%+v\nwant Relabel's\n%+v", got, want)
		}
	})
}

// relabelSeeds are FuzzRelabelInBytes's seed inputs: explorer messages of
// one to 33 steps, one with its dense labels only in Reward, an already
// swapped record, one with a compressed body and bytes that are not Arrow.
func relabelSeeds(t *testing.T) map[string][]byte {
	onlyReward := swappertest.Explorer("r", 1, 2, 4)
	for i := range onlyReward.Steps {
		onlyReward.Steps[i].DenseReward = 0
	}
	swapped, err := Relabel(swappertest.Explorer("r", 1, 3, 3))
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{
		"one_step":          swappertest.Encode(swappertest.Explorer("r", 1, 0, 1)),
		"five_steps":        swappertest.Encode(swappertest.Explorer("r", 1, 1, 5)),
		"thirty_three":      swappertest.Encode(swappertest.Explorer("r", 2, 7, 33)),
		"dense_only_reward": swappertest.Encode(onlyReward),
		"already_swapped":   swappertest.Encode(swapped),
		"not_arrow":         []byte("not arrow"),
	}
}

// TestRelabelFuzzCorpus keeps the checked-in seed corpus in step with
// relabelSeeds.
func TestRelabelFuzzCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzRelabelInBytes")
	fuzzcorpus.Check(t, dir, relabelSeeds(t), *update, "swapper")
}
