package schemas

import (
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/rspo-dev/rspo/internal/fuzzcorpus"
)

// FuzzDecodeTrajectory feeds arbitrary bytes to the decoder: it must never
// panic, must give the same answer twice (the decoder pools state), must
// fail only with one of the package's error classes, and anything it
// accepts must re-encode and decode to an equal value. The seed
// corpus is in testdata/fuzz/FuzzDecodeTrajectory (go test ./schemas -update
// rewrites it). Run with: go test ./schemas -run '^$' -fuzz FuzzDecodeTrajectory
func FuzzDecodeTrajectory(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := DecodeTrajectory(b)
		again, errAgain := DecodeTrajectory(b)
		if (err == nil) != (errAgain == nil) || !reflect.DeepEqual(tr, again) {
			t.Fatalf("two decodes of the same bytes differ: (%v, %v) then (%v, %v)", tr != nil, err, again != nil, errAgain)
		}
		if err != nil {
			checkErrorClass(t, tr != nil, err)
			return
		}
		checkReencodes(t, tr)
	})
}

// FuzzDecodeTrajectoryBatch is FuzzDecodeTrajectory for batch streams.
func FuzzDecodeTrajectoryBatch(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		ts, err := DecodeTrajectoryBatch(b)
		if err != nil {
			checkErrorClass(t, ts != nil, err)
			return
		}
		again, err := EncodeTrajectoryBatch(ts)
		if err != nil {
			t.Fatalf("accepted batch does not re-encode: %v", err)
		}
		back, err := DecodeTrajectoryBatch(again)
		if err != nil || !reflect.DeepEqual(back, ts) {
			t.Fatalf("re-encoded batch decodes to %d trajectories (err %v), want %d equal ones", len(back), err, len(ts))
		}
	})
}

func checkErrorClass(t *testing.T, gotValue bool, err error) {
	t.Helper()
	if gotValue {
		t.Fatalf("a value returned together with error %v", err)
	}
	if !errors.Is(err, ErrDecode) && !errors.Is(err, ErrSchemaVersion) && !errors.Is(err, ErrInvalid) {
		t.Fatalf("error outside the package's classes: %v", err)
	}
}

func checkReencodes(t *testing.T, tr *Trajectory) {
	t.Helper()
	again, err := EncodeTrajectory(tr)
	if err != nil {
		t.Fatalf("accepted trajectory does not re-encode: %v", err)
	}
	back, err := DecodeTrajectory(again)
	if err != nil {
		t.Fatalf("re-encoded trajectory does not decode: %v", err)
	}
	if !reflect.DeepEqual(back, tr) {
		t.Fatalf("round trip changed the value:\ngot  %s\nwant %s", describe(back), describe(tr))
	}
}

// fuzzSeeds are the seed inputs of both fuzz targets: valid streams and
// streams each rejected for a different reason.
func fuzzSeeds(t *testing.T) map[string][]byte {
	noLists := fixture()
	noLists.CreatedAt = noLists.CreatedAt.AddDate(-100, 0, 0)
	for i := range noLists.Steps {
		noLists.Steps[i].Admissible, noLists.Steps[i].TokenIDs, noLists.Steps[i].TokenLogProbs = nil, nil, nil
		noLists.Steps[i].ActionIndex = -1
	}
	nan := fixture()
	nan.Steps[2].DenseReward = math.NaN()
	valid := rawEncode(t, fixture())
	batch, err := EncodeTrajectoryBatch([]*Trajectory{fixture(), noLists})
	if err != nil {
		t.Fatal(err)
	}
	empty, err := EncodeTrajectoryBatch(nil)
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{
		"valid_fixture":    valid,
		"valid_realistic":  rawEncode(t, realistic(4)),
		"valid_no_lists":   rawEncode(t, noLists),
		"batch_of_two":     batch,
		"schema_only":      empty,
		"truncated":        valid[:len(valid)/2],
		"nan_dense_reward": rawEncode(t, nan),
		"run_varies":       withColumn(t, colRun, stringArray([]string{"golden", "x", "golden"}, nil)),
		"version_2": withSchema(t, func(f []arrow.Field, md *arrow.Metadata) []arrow.Field {
			*md = arrow.NewMetadata([]string{SchemaVersionKey}, []string{"2"})
			return f
		}),
	}
}

// TestFuzzCorpus keeps the checked-in seed corpora in step with fuzzSeeds.
func TestFuzzCorpus(t *testing.T) {
	for _, target := range []string{"FuzzDecodeTrajectory", "FuzzDecodeTrajectoryBatch", "FuzzPatchLabels", "FuzzDecodeDirect"} {
		dir := filepath.Join("testdata", "fuzz", target)
		fuzzcorpus.Check(t, dir, fuzzSeeds(t), *update, "schemas")
	}
}
