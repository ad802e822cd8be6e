package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/rspo-dev/rspo/internal/fuzzcorpus"
)

// batchFixture is a batch of two on-policy trajectories and one
// off-policy one, with every column set.
func batchFixture() *TrainBatch {
	rng, _ := rand.NewPCG(1, 2).MarshalBinary()
	b := &TrainBatch{Run: "golden", Update: 3, PolicyVersion: 2, Trainer: json.RawMessage(`{"Algo":"grpo","LR":0.03}`), TrainerRNG: rng,
		Loss: BatchLoss{Algo: "grpo", EpsOn: 0.2, EpsOff: 0.1, OffRatio: "behaviour", Beta: 0.01, Alpha: 0.25,
			WeightOn: 0.75 / 4, WeightOff: 0.25 / 2}}
	add := func(id string, steps int, off bool, group int32, adv float64) {
		for j := range steps {
			w := b.Loss.WeightOn
			if off {
				w = b.Loss.WeightOff
			}
			st := BatchStep{TrajectoryID: id, Step: int32(j), TaskID: "t-7", GroupID: "t-7/g", NormGroup: group,
				OffPolicy: off, GeneratingVersion: 2, Instruction: "put a clean mug in the cabinet.",
				Observation: fmt.Sprintf("You are in room %d.", j), Admissible: []string{"look", "go to sink 1", "take mug 1"},
				Action: "go to sink 1", ActionIndex: 1, BehaviorLogProb: -1.0986122886681098 + float64(j)/7,
				Advantage: adv, Weight: w, OutcomeReward: 1, Success: true}
			if j == steps-1 {
				st.Reward = 1
			}
			if !off {
				st.SwapCoef = 0.125 * float64(j)
			}
			if j == 0 {
				st.TokenIDs, st.TokenLogProbs = []int32{5, 17, 3}, []float32{-0.5, -1.25, -0.125}
			}
			b.Steps = append(b.Steps, st)
		}
	}
	add("golden/a", 2, false, 0, 0.7071067811865475)
	add("golden/b", 2, false, 0, -0.7071067811865475)
	add("golden/x", 2, true, 0, 1.4142135623730951)
	for i := range b.Steps { // the off-policy term's behaviour log-probs are π_B's
		if b.Steps[i].OffPolicy {
			b.Steps[i].BehaviorLogProb = -0.25
		}
	}
	b.Steps[2].Success, b.Steps[3].Success, b.Steps[2].OutcomeReward, b.Steps[3].OutcomeReward, b.Steps[3].Reward = false, false, 0, 0, 0
	return b
}

func encodeBatch(t testing.TB, b *TrainBatch) []byte {
	t.Helper()
	data, err := EncodeTrainBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestTrainBatchRoundTrip(t *testing.T) {
	b := batchFixture()
	data := encodeBatch(t, b)
	got, err := DecodeTrainBatch(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, b) {
		t.Fatalf("round trip changed the batch:\ngot  %+v\nwant %+v", got, b)
	}
	if again := encodeBatch(t, got); !bytes.Equal(again, data) {
		t.Fatal("encoding is not deterministic")
	}
	if n := got.Trajectories(); n != 3 {
		t.Errorf("trajectories: got %d, want 3", n)
	}
	if id := got.ID(); id != "golden/batch/3" {
		t.Errorf("id: got %q", id)
	}
}

// TestTrainBatchGolden pins the wire form: the Arrow schema with its
// metadata, the bytes of the fixture, and its JSON. Rewrite with
// go test ./schemas -update (and raise BatchFormat if a reader of the old
// bytes would misread the new ones).
func TestTrainBatchGolden(t *testing.T) {
	b := batchFixture()
	js, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []struct {
		file string
		data []byte
	}{
		{"train_batch_v1.arrows", encodeBatch(t, b)},
		{"train_batch_v1.json", append(js, '\n')},
		{"train_batch_v1_schema.txt", []byte(TrainBatchSchema(b).String() + "\n")},
	} {
		path := filepath.Join("testdata", g.file)
		if *update {
			if err := os.WriteFile(path, g.data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./schemas -update writes it)", err)
		}
		if !bytes.Equal(g.data, want) {
			t.Errorf("%s differs from what this code writes; go test ./schemas -update if the change is meant", path)
		}
	}
	stored, err := os.ReadFile(filepath.Join("testdata", "train_batch_v1.arrows"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := DecodeTrainBatch(stored); err != nil || !reflect.DeepEqual(got, b) {
		t.Fatalf("the stored batch decodes to %+v (%v)", got, err)
	}
}

// TestTrainBatchRefuses checks that Validate (and so the encoder and the
// decoder) refuses each kind of bad batch, naming the field.
func TestTrainBatchRefuses(t *testing.T) {
	long := strings.Repeat("x", MaxTextBytes+1)
	cases := []struct {
		name, field string
		edit        func(b *TrainBatch)
	}{
		{"bad run", "run", func(b *TrainBatch) { b.Run = "a.b" }},
		{"update 0", "update", func(b *TrainBatch) { b.Update = 0 }},
		{"forged version", "policy_version", func(b *TrainBatch) { b.PolicyVersion = 3 }},
		{"ppo", "loss.algo", func(b *TrainBatch) { b.Loss.Algo = "ppo" }},
		{"nan clip", "loss.eps", func(b *TrainBatch) { b.Loss.EpsOn = math.NaN() }},
		{"alpha 1", "loss.alpha", func(b *TrainBatch) { b.Loss.Alpha = 1 }},
		{"no rows", "steps", func(b *TrainBatch) { b.Steps = nil }},
		{"inf advantage", "steps[1].advantage", func(b *TrainBatch) { b.Steps[1].Advantage = math.Inf(1) }},
		{"positive log-prob", "steps[0].behavior_log_prob", func(b *TrainBatch) { b.Steps[0].BehaviorLogProb = 0.5 }},
		{"long observation", "steps[2].observation", func(b *TrainBatch) { b.Steps[2].Observation = long }},
		{"action not admissible", "steps[0].action", func(b *TrainBatch) { b.Steps[0].Action = "fly" }},
		{"token lengths", "steps[0].token_log_probs", func(b *TrainBatch) { b.Steps[0].TokenLogProbs = b.Steps[0].TokenLogProbs[:1] }},
		{"step gap", "steps[1].step", func(b *TrainBatch) { b.Steps[1].Step = 2 }},
		{"fields differ", "steps[1].step", func(b *TrainBatch) { b.Steps[1].TaskID = "other" }},
		{"norm group", "steps[0].norm_group", func(b *TrainBatch) {
			b.Steps[0].NormGroup, b.Steps[1].NormGroup = 9, 9
		}},
		{"bad trainer json", "trainer", func(b *TrainBatch) { b.Trainer = json.RawMessage("{") }},
		{"long trainer rng", "trainer_rng", func(b *TrainBatch) { b.TrainerRNG = make([]byte, MaxTrainerRNGBytes+1) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := batchFixture()
			c.edit(b)
			err := b.Validate()
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Field != c.field {
				t.Fatalf("got %v, want a *ValidationError of field %s", err, c.field)
			}
			if _, err := EncodeTrainBatch(b); !errors.Is(err, ErrInvalid) {
				t.Fatalf("encode: got %v, want ErrInvalid", err)
			}
		})
	}
}

// TestDecodeTrainBatchRefuses checks the decoder's own refusals: other
// formats, rows that disagree, and bytes that are no batch (a batch of
// another run decodes: its consumer refuses it, streams.Typed).
func TestDecodeTrainBatchRefuses(t *testing.T) {
	for name, c := range batchBadInputs(t) {
		t.Run(name, func(t *testing.T) {
			got, err := DecodeTrainBatch(c.data)
			if c.want == nil {
				if err != nil {
					t.Fatalf("got %v, want a batch", err)
				}
				return
			}
			if got != nil || !errors.Is(err, c.want) {
				t.Fatalf("got %v, %v; want %v", got != nil, err, c.want)
			}
		})
	}
}

type badBatch struct {
	data []byte
	want error
}

// batchBadInputs are bytes the decoder must refuse, by the error class it
// must refuse them with.
func batchBadInputs(t testing.TB) map[string]badBatch {
	valid := encodeBatch(t, batchFixture())
	other := batchFixture()
	other.Run = "other"
	mixed := writeBatchRecord(t, batchFixture(), func(c int, a arrow.Array) arrow.Array {
		if c != bcRun {
			return a
		}
		runs := make([]string, a.Len())
		for i := range runs {
			runs[i] = "golden"
		}
		runs[2] = "other"
		return stringArray(runs, nil)
	})
	v2 := batchFixture()
	schema := TrainBatchSchema(v2)
	md := schema.Metadata()
	keys, vals := md.Keys(), slicesClone(md.Values())
	vals[0] = "2"
	next := arrow.NewMetadata(keys, vals)
	return map[string]badBatch{
		"empty":           {nil, ErrDecode},
		"truncated":       {valid[:len(valid)/2], ErrDecode},
		"trailing bytes":  {append(append([]byte(nil), valid...), 0, 0, 0, 0, 0, 0, 0, 0), ErrDecode},
		"trajectory":      {rawEncode(t, fixture()), ErrSchemaVersion},
		"format 2":        {writeBatchWithSchema(t, v2, arrow.NewSchema(batchFields, &next)), ErrSchemaVersion},
		"run differs":     {mixed, ErrInvalid},
		"oversized":       {make([]byte, MaxTrainBatchBytes+1), ErrDecode},
		"valid other run": {encodeBatch(t, other), nil},
	}
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// writeBatchRecord encodes b with column c replaced by edit(c, column).
func writeBatchRecord(t testing.TB, b *TrainBatch, edit func(c int, a arrow.Array) arrow.Array) []byte {
	t.Helper()
	rec, err := ipc.NewReader(bytes.NewReader(encodeBatch(t, b)))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	if !rec.Next() {
		t.Fatal("no record")
	}
	r := rec.Record()
	cols := make([]arrow.Array, r.NumCols())
	for c := range cols {
		cols[c] = edit(c, r.Column(c))
	}
	out := array.NewRecord(r.Schema(), cols, r.NumRows())
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(r.Schema()), ipc.WithAllocator(memory.DefaultAllocator))
	if err := w.Write(out); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeBatchWithSchema encodes b's rows under another schema.
func writeBatchWithSchema(t testing.TB, b *TrainBatch, schema *arrow.Schema) []byte {
	t.Helper()
	rec, err := ipc.NewReader(bytes.NewReader(encodeBatch(t, b)))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	rec.Next()
	r := rec.Record()
	out := array.NewRecord(schema, r.Columns(), r.NumRows())
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	if err := w.Write(out); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	return buf.Bytes()
}

// FuzzDecodeTrainBatch: the decoder never panics, gives the same answer
// twice, fails only with the package's error classes, and what it accepts
// re-encodes to a batch that decodes equal. Seed corpus:
// testdata/fuzz/FuzzDecodeTrainBatch (go test ./schemas -update rewrites
// it). Run with: go test ./schemas -run '^$' -fuzz FuzzDecodeTrainBatch
func FuzzDecodeTrainBatch(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := DecodeTrainBatch(data)
		again, errAgain := DecodeTrainBatch(data)
		if (err == nil) != (errAgain == nil) || !reflect.DeepEqual(b, again) {
			t.Fatalf("two decodes of the same bytes differ: %v then %v", err, errAgain)
		}
		if err != nil {
			checkErrorClass(t, b != nil, err)
			return
		}
		enc, err := EncodeTrainBatch(b)
		if err != nil {
			t.Fatalf("accepted batch does not re-encode: %v", err)
		}
		back, err := DecodeTrainBatch(enc)
		if err != nil || !reflect.DeepEqual(back, b) {
			t.Fatalf("re-encoded batch decodes to %+v (%v)", back, err)
		}
	})
}

// TestTrainBatchFuzzCorpus keeps the checked-in seed corpus in step.
func TestTrainBatchFuzzCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzDecodeTrainBatch")
	seeds := map[string][]byte{"valid": encodeBatch(t, batchFixture())}
	for name, c := range batchBadInputs(t) {
		if len(c.data) <= 1<<20 {
			seeds[strings.ReplaceAll(name, " ", "_")] = c.data
		}
	}
	fuzzcorpus.Check(t, dir, seeds, *update, "schemas")
}

func BenchmarkDecodeTrainBatch(b *testing.B) {
	data := encodeBatch(b, batchFixture())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeTrainBatch(data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "batches/s")
}
