package schemas

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// withColumn returns the fixture's record batch, written as a stream, with
// column c replaced by arr.
func withColumn(t *testing.T, c int, arr arrow.Array) []byte {
	t.Helper()
	rec := buildRecord(fixture())
	cols := rec.Columns()
	cols[c] = arr
	return writeRecords(t, trajectorySchema, array.NewRecord(trajectorySchema, cols, rec.NumRows()))
}

// withSchema returns the fixture's columns written under another schema.
func withSchema(t *testing.T, edit func(fields []arrow.Field, md *arrow.Metadata) []arrow.Field) []byte {
	t.Helper()
	rec := buildRecord(fixture())
	md := trajectorySchema.Metadata()
	fields := edit(trajectorySchema.Fields(), &md)
	schema := arrow.NewSchema(fields, &md)
	cols := rec.Columns()[:len(fields)]
	return writeRecords(t, schema, array.NewRecord(schema, cols, rec.NumRows()))
}

// arrowFile returns the fixture in the Arrow IPC file format (not a stream).
func arrowFile(t *testing.T) []byte {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "fixture.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fw, err := ipc.NewFileWriter(f, ipc.WithSchema(trajectorySchema))
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(buildRecord(fixture())); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func stringArray(values []string, valid []bool) arrow.Array {
	b := array.NewStringBuilder(memory.DefaultAllocator)
	b.AppendValues(values, valid)
	return b.NewArray()
}

func int32Array(values ...int32) arrow.Array {
	b := array.NewInt32Builder(memory.DefaultAllocator)
	b.AppendValues(values, nil)
	return b.NewArray()
}

func TestDecodeRejects(t *testing.T) {
	golden := rawEncode(t, fixture())
	two, err := EncodeTrajectoryBatch([]*Trajectory{fixture(), fixture()})
	if err != nil {
		t.Fatal(err)
	}
	empty, err := EncodeTrajectoryBatch(nil)
	if err != nil {
		t.Fatal(err)
	}
	jsonBytes, _ := json.Marshal(fixture())
	fileFormat := arrowFile(t)
	hugeMeta := bytes.Clone(golden)
	binary.LittleEndian.PutUint32(hugeMeta[4:], 0x7fffffff)
	negMeta := bytes.Clone(golden)
	binary.LittleEndian.PutUint32(negMeta[4:], 0x80000000)

	tests := []struct {
		name string
		in   []byte
		want error
		// field, if set, is the *ValidationError's Field.
		field string
		// reason, if set, must appear in the error text.
		reason string
	}{
		{"nil", nil, ErrDecode, "", "truncated"},
		{"not arrow", []byte("hello, world"), ErrDecode, "", "continuation"},
		{"json", jsonBytes, ErrDecode, "", ""},
		{"arrow file format", fileFormat, ErrDecode, "", ""},
		{"truncated in the schema", golden[:100], ErrDecode, "", ""},
		{"truncated in the batch", golden[:len(golden)-200], ErrDecode, "", ""},
		{"no end-of-stream marker", golden[:len(golden)-8], ErrDecode, "", "end-of-stream"},
		{"trailing bytes", append(bytes.Clone(golden), 1, 2, 3), ErrDecode, "", "after the end-of-stream"},
		{"metadata length past the end", hugeMeta, ErrDecode, "", "metadata"},
		{"negative metadata length", negMeta, ErrDecode, "", "metadata"},
		{"two record batches", two, ErrDecode, "", "more than one record batch"},
		{"no record batch", empty, ErrDecode, "", "no record batch"},
		{"too large", make([]byte, MaxMessageBytes+1), ErrDecode, "", "at most"},
		{"other schema version", withSchema(t, func(f []arrow.Field, md *arrow.Metadata) []arrow.Field {
			*md = arrow.NewMetadata([]string{SchemaVersionKey}, []string{"2"})
			return f
		}), ErrSchemaVersion, "", `"2"`},
		{"no schema version", withSchema(t, func(f []arrow.Field, md *arrow.Metadata) []arrow.Field {
			*md = arrow.Metadata{}
			return f
		}), ErrSchemaVersion, "", SchemaVersionKey},
		{"missing column", withSchema(t, func(f []arrow.Field, _ *arrow.Metadata) []arrow.Field {
			return f[:numColumns-1]
		}), ErrSchemaVersion, "", "columns"},
		{"renamed column", withSchema(t, func(f []arrow.Field, _ *arrow.Metadata) []arrow.Field {
			f[colReward].Name = "return"
			return f
		}), ErrSchemaVersion, "", "column 27"},
		{"nullable column", withSchema(t, func(f []arrow.Field, _ *arrow.Metadata) []arrow.Field {
			f[colRun].Nullable = true
			return f
		}), ErrSchemaVersion, "", "column 1"},
		{"run differs between rows", withColumn(t, colRun, stringArray([]string{"golden", "golden", "other"}, nil)),
			ErrInvalid, "run", "row 2 differs"},
		{"null in a non-nullable column", withColumn(t, colAction, stringArray([]string{"a", "", "c"}, []bool{true, false, true})),
			ErrDecode, "", "nulls"},
		{"steps out of order", withColumn(t, colStep, int32Array(0, 2, 1)), ErrDecode, "", "row 1 holds step 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeTrajectory(tc.in)
			if got != nil || !errors.Is(err, tc.want) {
				t.Fatalf("got (%v, %v), want error matching %v", got != nil, err, tc.want)
			}
			for _, other := range []error{ErrDecode, ErrSchemaVersion, ErrInvalid} {
				if other != tc.want && errors.Is(err, other) {
					t.Errorf("%v also matches %v", err, other)
				}
			}
			var ve *ValidationError
			if tc.field != "" && (!errors.As(err, &ve) || ve.Field != tc.field) {
				t.Errorf("got %v, want a *ValidationError for %q", err, tc.field)
			}
			if !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("got %q, want it to mention %q", err, tc.reason)
			}
		})
	}
}

func TestDecodeCreatedAtNulls(t *testing.T) {
	b := array.NewTimestampBuilder(memory.DefaultAllocator, createdAtType)
	b.AppendValues([]arrow.Timestamp{1, 1, 1}, []bool{true, false, true})
	_, err := DecodeTrajectory(withColumn(t, colCreatedAt, b.NewArray()))
	if !errors.Is(err, ErrDecode) || !strings.Contains(err.Error(), "null on 1 of 3 rows") {
		t.Errorf("got %v, want ErrDecode about partial nulls", err)
	}
}

func TestDecodeRejectsEveryTruncation(t *testing.T) {
	b, err := EncodeTrajectory(fixture())
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(b) {
		if _, err := DecodeTrajectory(b[:n]); !errors.Is(err, ErrDecode) {
			t.Fatalf("first %d of %d bytes: got %v, want ErrDecode", n, len(b), err)
		}
	}
}

func TestDecodeBatchRejects(t *testing.T) {
	if _, err := DecodeTrajectoryBatch(make([]byte, MaxBatchBytes+1)); !errors.Is(err, ErrDecode) {
		t.Errorf("oversized batch: got %v, want ErrDecode", err)
	}
	one, err := EncodeTrajectory(fixture())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeTrajectoryBatch(one[:len(one)-8]); !errors.Is(err, ErrDecode) {
		t.Errorf("batch without end marker: got %v, want ErrDecode", err)
	}
}

// TestArrowReadsOurStream checks interoperability: Arrow's own stream reader
// reads what we write, schema metadata included.
func TestArrowReadsOurStream(t *testing.T) {
	b, err := EncodeTrajectory(fixture())
	if err != nil {
		t.Fatal(err)
	}
	r, err := ipc.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	if v, _ := r.Schema().Metadata().GetValue(SchemaVersionKey); v != "1" {
		t.Errorf("schema version: got %q, want %q", v, "1")
	}
	rows := 0
	for r.Next() {
		rows += int(r.Record().NumRows())
		if got := r.Record().Column(colAction).(*array.String).Value(0); got != "go to fridge 1" {
			t.Errorf("action[0]: got %q, want %q", got, "go to fridge 1")
		}
	}
	if r.Err() != nil || rows != 3 {
		t.Errorf("got %d rows (err %v), want 3", rows, r.Err())
	}
}

func TestErrorTexts(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&ValidationError{Field: "steps[0].reward", Reason: "NaN is not finite"}, "schemas: invalid steps[0].reward: NaN is not finite"},
		{&DecodeError{Reason: "at byte 8", Err: errors.New("boom")}, "schemas: cannot decode trajectory: at byte 8: boom"},
		{&DecodeError{Reason: "no record batch"}, "schemas: cannot decode trajectory: no record batch"},
		{&SchemaError{Version: "1", Reason: "31 columns, want 32"}, "schemas: schema does not match version 1: 31 columns, want 32"},
		{&SchemaError{Version: "2", Reason: "a different schema version"}, `schemas: schema version "2" not readable (this code reads 1): a different schema version`},
	}
	for _, tc := range tests {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

// TestDecodeBoundsSchemaSize checks that schema messages larger or deeper
// than a trajectory's are refused before Arrow expands them.
func TestDecodeBoundsSchemaSize(t *testing.T) {
	wide := make([]arrow.Field, maxSchemaElements+1)
	for i := range wide {
		wide[i] = arrow.Field{Name: "f", Type: arrow.PrimitiveTypes.Int8}
	}
	var deep arrow.DataType = arrow.PrimitiveTypes.Int8
	for range maxSchemaDepth {
		deep = arrow.ListOf(deep)
	}
	tests := []struct {
		name   string
		schema *arrow.Schema
		reason string
	}{
		{"too many fields", arrow.NewSchema(wide, nil), "at most 65536"},
		{"too deep", arrow.NewSchema([]arrow.Field{{Name: "deep", Type: deep}}, nil), "deeper than 16"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeTrajectory(writeRecords(t, tc.schema))
			if !errors.Is(err, ErrDecode) || !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("got %v, want ErrDecode mentioning %q", err, tc.reason)
			}
		})
	}
}

// TestDecodeOtherWriters checks streams that carry our schema in a schema
// message other than ours (here with an extra metadata key, as another
// Arrow implementation might write): they take the full schema check, and
// decoding them in between does not disturb the fast path for ours.
func TestDecodeOtherWriters(t *testing.T) {
	foreign := withSchema(t, func(f []arrow.Field, md *arrow.Metadata) []arrow.Field {
		*md = arrow.NewMetadata([]string{"writer", SchemaVersionKey}, []string{"other", "1"})
		return f
	})
	if bytes.HasPrefix(foreign, schemaMessage) {
		t.Fatal("test stream starts with our schema message; it would not test the general path")
	}
	ours, err := EncodeTrajectory(fixture())
	if err != nil {
		t.Fatal(err)
	}
	corrupt := bytes.Clone(ours)
	corrupt[len(schemaMessage)+200] ^= 0xff
	for i, in := range [][]byte{foreign, ours, corrupt, ours, foreign, ours} {
		got, err := DecodeTrajectory(in)
		if i == 2 {
			if err == nil {
				t.Errorf("input %d (corrupt): got no error", i)
			}
			continue
		}
		if err != nil {
			t.Fatalf("input %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, fixture()) {
			t.Errorf("input %d: got\n%s\nwant the fixture", i, describe(got))
		}
	}
}
