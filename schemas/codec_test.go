package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Trajectory)
	}{
		{"fixture", func(*Trajectory) {}},
		{"one step, no lists, zero time", func(tr *Trajectory) {
			tr.Steps = tr.Steps[1:2]
			tr.Steps[0].TokenIDs, tr.Steps[0].TokenLogProbs = nil, nil
			tr.CreatedAt = time.Time{}
			tr.DistinctStates, tr.RepeatedVisits = 1, 0
		}},
		{"token ids without log-probs", func(tr *Trajectory) { tr.Steps[1].TokenLogProbs = nil }},
		{"extreme numbers", func(tr *Trajectory) {
			tr.Cycle, tr.PolicyVersion, tr.Seq, tr.TaskSeed = math.MaxInt64, math.MaxInt64, math.MaxUint64, math.MinInt64
			tr.OutcomeReward = 0
			tr.Steps[0].Reward, tr.Steps[0].DenseReward = -math.MaxFloat64, math.SmallestNonzeroFloat64
			tr.Steps[0].BehaviorLogProb = -math.MaxFloat64
			tr.Steps[0].StateKey = math.MaxUint64
			tr.Steps[1].NumAdmissible = math.MaxInt32
			tr.Steps[1].TokenIDs[0] = math.MaxInt32
			tr.CreatedAt = time.Unix(0, math.MinInt64).UTC()
		}},
		{"empty strings", func(tr *Trajectory) {
			tr.Producer, tr.Env, tr.TaskID, tr.TaskType, tr.Split, tr.Instruction, tr.GroupID = "", "", "", "", "", "", ""
			tr.Steps[1].Observation, tr.Steps[1].Action = "", ""
			tr.Steps[0].Admissible = []string{"", "go to fridge 1", ""}
			tr.Steps[0].ActionIndex = 1
		}},
		{"on-policy, not swapped", func(tr *Trajectory) {
			tr.Source, tr.Swapped, tr.Success, tr.OutcomeReward = SourceOnPolicy, false, false, 0.5
			tr.DistinctStates, tr.RepeatedVisits = 0, 0
		}},
		{"max steps", func(tr *Trajectory) {
			steps := make([]Step, MaxSteps)
			for i := range steps {
				steps[i] = tr.Steps[i%len(tr.Steps)].clone()
			}
			tr.Steps = steps
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := fixture()
			tc.modify(want)
			b, err := EncodeTrajectory(want)
			if err != nil {
				t.Fatalf("EncodeTrajectory: %v", err)
			}
			got, err := DecodeTrajectory(b)
			if err != nil {
				t.Fatalf("DecodeTrajectory: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("round trip:\ngot  %s\nwant %s", describe(got), describe(want))
			}
		})
	}
}

func TestRoundTripNormalises(t *testing.T) {
	in := fixture()
	in.CreatedAt = in.CreatedAt.In(time.FixedZone("CEST", 2*3600))
	in.Steps[0].TokenIDs = []int32{}
	b, err := EncodeTrajectory(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeTrajectory(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.CreatedAt.Location() != time.UTC || !got.CreatedAt.Equal(in.CreatedAt) {
		t.Errorf("created_at: got %v, want %v in UTC", got.CreatedAt, in.CreatedAt)
	}
	if got.Steps[0].TokenIDs != nil {
		t.Errorf("empty token_ids: got %#v, want nil", got.Steps[0].TokenIDs)
	}
}

func TestDecodedListsDoNotOverlap(t *testing.T) {
	b, err := EncodeTrajectory(fixture())
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeTrajectory(b)
	if err != nil {
		t.Fatal(err)
	}
	_ = append(got.Steps[0].Admissible, "appended")
	if got.Steps[2].Admissible[0] != "take egg 1 from fridge 1" {
		t.Errorf("append to step 0's list changed step 2's: got %q", got.Steps[2].Admissible[0])
	}
	for i := range b {
		b[i] = 0
	}
	if got.Steps[0].Observation != fixture().Steps[0].Observation {
		t.Errorf("decoded value aliases the input bytes: got %q", got.Steps[0].Observation)
	}
}

func TestBatchRoundTrip(t *testing.T) {
	second := fixture()
	second.ID, second.Seq, second.Steps = "golden.explore.explorer-1.8", 8, second.Steps[:1]
	second.DistinctStates, second.RepeatedVisits = 1, 0
	tests := []struct {
		name string
		in   []*Trajectory
	}{
		{"empty", []*Trajectory{}},
		{"one", []*Trajectory{fixture()}},
		{"three", []*Trajectory{fixture(), second, fixture()}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := EncodeTrajectoryBatch(tc.in)
			if err != nil {
				t.Fatalf("EncodeTrajectoryBatch: %v", err)
			}
			got, err := DecodeTrajectoryBatch(b)
			if err != nil {
				t.Fatalf("DecodeTrajectoryBatch: %v", err)
			}
			if !reflect.DeepEqual(got, tc.in) {
				t.Errorf("got %d trajectories %v, want %d %v", len(got), got, len(tc.in), tc.in)
			}
		})
	}
}

func TestBatchErrorsNameTheTrajectory(t *testing.T) {
	bad := fixture()
	bad.Steps[1].Reward = math.NaN()
	_, err := EncodeTrajectoryBatch([]*Trajectory{fixture(), bad})
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "[1].steps[1].reward" {
		t.Fatalf("EncodeTrajectoryBatch: got %v, want a ValidationError for [1].steps[1].reward", err)
	}
	b, err := writeStream([]*Trajectory{fixture(), bad}, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = DecodeTrajectoryBatch(b)
	if !errors.As(err, &ve) || ve.Field != "[1].steps[1].reward" {
		t.Fatalf("DecodeTrajectoryBatch: got %v, want a ValidationError for [1].steps[1].reward", err)
	}
	if _, err := EncodeTrajectoryBatch(make([]*Trajectory, MaxBatchTrajectories+1)); !errors.Is(err, ErrInvalid) {
		t.Errorf("oversized batch: got %v, want ErrInvalid", err)
	}
}

// TestGolden pins the wire bytes (and the JSON form) of the fixture, so any
// change to the schema or its encoding shows up here. Regenerate with
// go test ./schemas -update, and bump SchemaVersion if the layout changed.
func TestGolden(t *testing.T) {
	arrowBytes, err := EncodeTrajectory(fixture())
	if err != nil {
		t.Fatal(err)
	}
	jsonBytes, err := json.MarshalIndent(fixture(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []struct {
		file string
		got  []byte
	}{
		{"trajectory_v1.arrows", arrowBytes},
		{"trajectory_v1.json", append(jsonBytes, '\n')},
	} {
		path := filepath.Join("testdata", g.file)
		if *update {
			if err := os.WriteFile(path, g.got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./schemas -update to create it)", err)
		}
		if !bytes.Equal(g.got, want) {
			t.Errorf("%s: encoding changed (got %d bytes, want %d); if intended, bump SchemaVersion and run -update",
				g.file, len(g.got), len(want))
		}
	}
}

func TestGoldenDecodes(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "trajectory_v1.arrows"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeTrajectory(b)
	if err != nil {
		t.Fatalf("DecodeTrajectory(golden): %v", err)
	}
	if want := fixture(); !reflect.DeepEqual(got, want) {
		t.Errorf("golden decodes to\n%s\nwant\n%s", describe(got), describe(want))
	}
}

func TestEncodeDeterministic(t *testing.T) {
	first, err := EncodeTrajectory(realistic(32))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		again, err := EncodeTrajectory(realistic(32))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, first) {
			t.Fatalf("encoding %d differs from the first", i+1)
		}
	}
}

func TestSchemaVersionInMetadata(t *testing.T) {
	got, ok := TrajectorySchema().Metadata().GetValue(SchemaVersionKey)
	if !ok || got != "1" {
		t.Errorf("schema metadata %s: got %q (present %v), want %q", SchemaVersionKey, got, ok, "1")
	}
}

// TestPooledEncoderMatchesFreshWriter checks that reusing pooled writers
// and scratch space gives the bytes a fresh Arrow writer gives, whatever was
// encoded before.
func TestPooledEncoderMatchesFreshWriter(t *testing.T) {
	big, small := realistic(40), fixture()
	for i, tr := range []*Trajectory{big, small, big, small, small} {
		got, err := EncodeTrajectory(tr)
		if err != nil {
			t.Fatal(err)
		}
		want := writeRecords(t, trajectorySchema, buildRecord(tr))
		if !bytes.Equal(got, want) {
			t.Fatalf("encoding %d: %d bytes differ from a fresh writer's %d", i, len(got), len(want))
		}
	}
	batch, err := EncodeTrajectoryBatch([]*Trajectory{small, big})
	if err != nil {
		t.Fatal(err)
	}
	if want := writeRecords(t, trajectorySchema, buildRecord(small), buildRecord(big)); !bytes.Equal(batch, want) {
		t.Fatalf("batch: %d bytes differ from a fresh writer's %d", len(batch), len(want))
	}
}

// TestDecodedValuesOutliveTheDecoder checks that a decoded trajectory shares
// no memory with the decoder's pooled buffers: decoding other messages
// afterwards must not change it.
func TestDecodedValuesOutliveTheDecoder(t *testing.T) {
	b, err := EncodeTrajectory(fixture())
	if err != nil {
		t.Fatal(err)
	}
	first, err := DecodeTrajectory(b)
	if err != nil {
		t.Fatal(err)
	}
	other, err := EncodeTrajectory(realistic(64))
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if _, err := DecodeTrajectory(other); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(first, fixture()) {
		t.Errorf("a later decode changed an earlier result:\n%s", describe(first))
	}
}

// TestConcurrentCodec exercises the pooled encoders and decoders from
// several goroutines (run with -race).
func TestConcurrentCodec(t *testing.T) {
	inputs := []*Trajectory{fixture(), realistic(8), realistic(33)}
	want := make([][]byte, len(inputs))
	for i, tr := range inputs {
		b, err := EncodeTrajectory(tr)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = b
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Go(func() {
			for k := range 30 {
				i := (g + k) % len(inputs)
				b, err := EncodeTrajectory(inputs[i])
				if err == nil && !bytes.Equal(b, want[i]) {
					err = fmt.Errorf("encoding %d differs", i)
				}
				if err == nil {
					var got *Trajectory
					got, err = DecodeTrajectory(b)
					if err == nil && !reflect.DeepEqual(got, inputs[i]) {
						err = fmt.Errorf("decoding %d differs", i)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
