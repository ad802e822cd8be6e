package schemas

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// withLabels returns a copy of t with labels drawn from rng: new rewards
// and dense rewards on every step, Swapped flipped, and priority keys that
// Validate accepts.
func withLabels(t *Trajectory, rng *rand.Rand) *Trajectory {
	out := t.Clone()
	for i := range out.Steps {
		out.Steps[i].Reward = math.Round(rng.NormFloat64()*1000) / 1000
		out.Steps[i].DenseReward = rng.Float64()
		if rng.IntN(4) == 0 {
			out.Steps[i].Reward = 0
		}
	}
	n := int32(len(out.Steps))
	out.Swapped = !t.Swapped
	out.DistinctStates = rng.Int32N(n + 1)
	out.RepeatedVisits = rng.Int32N(n - out.DistinctStates + 1)
	return out
}

// randomTrajectory is a valid trajectory of 1..300 steps with random
// content, some steps without lists, some with tokens.
func randomTrajectory(rng *rand.Rand) *Trajectory {
	t := fixture()
	t.Swapped = rng.IntN(2) == 0
	if rng.IntN(3) == 0 {
		t.CreatedAt = time.Time{}
	}
	t.Instruction = words(rng.IntN(30), rng.IntN(100))
	t.Steps = make([]Step, 1+rng.IntN(300))
	for i := range t.Steps {
		s := Step{Observation: words(rng.IntN(60), i), Action: words(1+rng.IntN(4), i),
			ActionIndex: -1, BehaviorLogProb: -rng.Float64(), Reward: rng.Float64(),
			DenseReward: rng.Float64(), StateKey: rng.Uint64N(8)}
		if rng.IntN(2) == 0 {
			s.Admissible = []string{s.Action, words(3, i+1)}
			s.NumAdmissible, s.ActionIndex = 2, 0
		}
		if rng.IntN(3) == 0 {
			s.TokenIDs = []int32{int32(i), 7, 9}
			s.TokenLogProbs = []float32{-0.5, -1, 0}
		}
		t.Steps[i] = s
	}
	t.DistinctStates, t.RepeatedVisits = StateStats(t.Steps)
	return t
}

// TestPatchLabels: for many trajectories and labels, patching the encoded
// trajectory gives the bytes EncodeTrajectory writes for the relabelled
// one, which decode to it field for field.
func TestPatchLabels(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ts := []*Trajectory{fixture(), realistic(1), realistic(32), realistic(77)}
	for range 200 {
		ts = append(ts, randomTrajectory(rng))
	}
	for i, tr := range ts {
		msg, err := EncodeTrajectory(tr)
		if err != nil {
			t.Fatalf("trajectory %d: %v", i, err)
		}
		orig := bytes.Clone(msg)
		want := withLabels(tr, rng)
		got, err := PatchLabels(msg, want)
		if err != nil {
			t.Fatalf("trajectory %d (%d steps): %v", i, len(tr.Steps), err)
		}
		if !bytes.Equal(msg, orig) {
			t.Fatalf("trajectory %d: PatchLabels modified its input", i)
		}
		wantBytes, err := EncodeTrajectory(want)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, wantBytes) {
			t.Errorf("trajectory %d (%d steps): patched bytes differ from the encoding of the relabelled trajectory", i, len(tr.Steps))
		}
		dec, err := DecodeTrajectory(got)
		if err != nil {
			t.Fatalf("trajectory %d: decode patched: %v", i, err)
		}
		if !reflect.DeepEqual(dec, decodeOf(t, wantBytes)) {
			t.Errorf("trajectory %d: decodes to %s, want %s", i, describe(dec), describe(want))
		}
	}
}

func decodeOf(t *testing.T, b []byte) *Trajectory {
	t.Helper()
	tr, err := DecodeTrajectory(b)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestPatchLabelsRefuses: every message PatchLabels cannot locate the label
// columns of exactly is refused with ErrNotPatchable, bad labels with a
// ValidationError.
func TestPatchLabelsRefuses(t *testing.T) {
	valid := rawEncode(t, fixture())
	labels := fixture()
	batch, err := EncodeTrajectoryBatch([]*Trajectory{fixture(), fixture()})
	if err != nil {
		t.Fatal(err)
	}
	empty, err := EncodeTrajectoryBatch(nil)
	if err != nil {
		t.Fatal(err)
	}
	nullRewards := func() []byte {
		b := array.NewFloat64Builder(memory.DefaultAllocator)
		b.AppendValues([]float64{0, 0, 1}, []bool{true, false, true})
		return withColumn(t, colReward, b.NewArray())
	}()
	shorter := fixture()
	shorter.Steps = shorter.Steps[:2]
	shorter.DistinctStates, shorter.RepeatedVisits = StateStats(shorter.Steps)

	tests := []struct {
		name string
		msg  []byte
		t    *Trajectory
	}{
		{"empty", nil, labels},
		{"schema only", empty, labels},
		{"two record batches", batch, labels},
		{"truncated", valid[:len(valid)-9], labels},
		{"trailing bytes", append(bytes.Clone(valid), 0), labels},
		{"another schema message", withSchema(t, func(f []arrow.Field, md *arrow.Metadata) []arrow.Field {
			*md = arrow.NewMetadata([]string{SchemaVersionKey, "x"}, []string{"1", "y"})
			return f
		}), labels},
		{"compressed", compressed(t, fixture()), labels},
		{"nulls in reward", nullRewards, labels},
		{"rows differ from steps", valid, shorter},
		{"overlapping buffers", overlapBuffers(t, valid), labels},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PatchLabels(tc.msg, tc.t)
			if !errors.Is(err, ErrNotPatchable) {
				t.Fatalf("got %d bytes and error %v, want ErrNotPatchable", len(got), err)
			}
		})
	}

	nan := fixture()
	nan.Steps[1].Reward = math.NaN()
	tooMany := fixture()
	tooMany.DistinctStates = int32(len(tooMany.Steps) + 1)
	for _, bad := range []*Trajectory{nan, tooMany, nil} {
		var ve *ValidationError
		if _, err := PatchLabels(valid, bad); !errors.As(err, &ve) {
			t.Errorf("labels %v: got %v, want a *ValidationError", bad, err)
		}
	}
}

// compressed writes t with an LZ4-compressed body.
func compressed(t *testing.T, tr *Trajectory) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(trajectorySchema), ipc.WithLZ4())
	rec := buildRecord(tr)
	defer rec.Release()
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeTrajectory(buf.Bytes()); err != nil {
		t.Fatalf("the compressed message does not decode: %v", err)
	}
	return buf.Bytes()
}

// overlapBuffers returns msg with the reward column's value buffer moved
// onto the behaviour log-probs' (the value buffer before it in the body), a
// forgery that patching would corrupt.
func overlapBuffers(t *testing.T, msg []byte) []byte {
	t.Helper()
	out := bytes.Clone(msg)
	metaStart := len(schemaMessage) + 8
	metaLen := int(binary.LittleEndian.Uint32(out[len(schemaMessage)+4:]))
	f := flatbuf(out[metaStart : metaStart+metaLen])
	root, _ := f.indirect(0)
	m, _ := f.table(root)
	batch, _, _ := f.subTable(m, slotMessageHeader)
	start, _, err := f.vector(batch, slotRecordBatchBuffers, bufferBytes)
	if err != nil {
		t.Fatal(err)
	}
	reward := start + bufferBytes*columnLayout[colReward].values
	prev := start + bufferBytes*columnLayout[colBehaviorLogProb].values
	copy(f[reward:reward+8], f[prev:prev+8])
	return out
}

// FuzzPatchLabels patches arbitrary bytes with labels derived from them: it
// must never panic, and whenever the bytes decode and the patch succeeds,
// the result decodes to the decoded trajectory with the new labels. Its
// seed corpus is FuzzDecodeTrajectory's (testdata/fuzz/FuzzPatchLabels).
// Run with: go test ./schemas -run '^$' -fuzz FuzzPatchLabels
func FuzzPatchLabels(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		rng := rand.New(rand.NewPCG(uint64(len(b)), 7))
		tr, err := DecodeTrajectory(b)
		if err != nil {
			if out, err := PatchLabels(b, fixture()); err == nil && len(out) != len(b) {
				t.Fatalf("patched %d bytes into %d", len(b), len(out))
			}
			return
		}
		want := withLabels(tr, rng)
		out, err := PatchLabels(b, want)
		if err != nil {
			if !errors.Is(err, ErrNotPatchable) {
				t.Fatalf("valid labels refused with %v", err)
			}
			return
		}
		got, err := DecodeTrajectory(out)
		if err != nil {
			t.Fatalf("the patched message does not decode: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("patched message decodes to %s, want %s", describe(got), describe(want))
		}
	})
}

// TestPatchLabelsMutations is FuzzPatchLabels's property over random
// corruptions of valid messages (bytes overwritten anywhere, most often in
// the record batch's metadata, where the buffer offsets are): whatever
// PatchLabels accepts of a message that decodes must decode to the
// decoded trajectory with the new labels.
func TestPatchLabelsMutations(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	base := [][]byte{rawEncode(t, fixture()), rawEncode(t, realistic(3)), rawEncode(t, randomTrajectory(rng))}
	var decoded, patched int
	for i := range 20000 {
		b := bytes.Clone(base[i%len(base)])
		metaStart := len(schemaMessage) + 8
		metaLen := int(binary.LittleEndian.Uint32(b[len(schemaMessage)+4:]))
		for range 1 + rng.IntN(3) {
			at := rng.IntN(len(b))
			if rng.IntN(4) != 0 {
				at = metaStart + rng.IntN(metaLen)
			}
			b[at] = byte(rng.Uint32())
		}
		tr, err := DecodeTrajectory(b)
		if err != nil {
			PatchLabels(b, fixture()) // must not panic; no claim on the result
			continue
		}
		decoded++
		want := withLabels(tr, rng)
		out, err := PatchLabels(b, want)
		if err != nil {
			if !errors.Is(err, ErrNotPatchable) {
				t.Fatalf("mutation %d: valid labels refused with %v", i, err)
			}
			continue
		}
		patched++
		got, err := DecodeTrajectory(out)
		if err != nil {
			t.Fatalf("mutation %d: the patched message does not decode: %v", i, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("mutation %d: patched message decodes to %s, want %s", i, describe(got), describe(want))
		}
	}
	t.Logf("%d mutations decoded, %d of them patched", decoded, patched)
	if patched == 0 {
		t.Error("no mutated message was patched: the test checks nothing")
	}
}
