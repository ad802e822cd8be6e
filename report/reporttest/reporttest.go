// Package reporttest reads a report directory as its users' tools do, for
// the tests of the packages that write one: the TensorBoard event file
// record by record with both checksums checked, and the CSV tables.
package reporttest

import (
	"encoding/binary"
	"encoding/csv"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// Scalar is one value of the event file: its step, tag and value.
type Scalar struct {
	Step  int64
	Tag   string
	Value float32
}

// EventFile reads the one event file of dir (events.out.tfevents.*) and
// returns its scalars in file order. It fails the test unless there is
// exactly one, every record is whole with both CRC-32C checksums right,
// and the first record is the file version.
func EventFile(t testing.TB, dir string) []Scalar {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "events.out.tfevents.*"))
	if err != nil || len(paths) != 1 {
		t.Fatalf("event files in %s: %v (%v), want one", dir, paths, err)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	records, err := Records(b)
	if err != nil {
		t.Fatalf("%s: %v", paths[0], err)
	}
	if len(records) == 0 || !isFileVersion(records[0]) {
		t.Fatalf("%s does not start with the file version record", paths[0])
	}
	var out []Scalar
	for i, r := range records[1:] {
		s, err := scalars(r)
		if err != nil {
			t.Fatalf("%s record %d: %v", paths[0], i+1, err)
		}
		out = append(out, s...)
	}
	return out
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Records splits a TFRecord file into its records' data, checking the
// framing and both masked checksums.
func Records(b []byte) ([][]byte, error) {
	check := func(what string, data []byte, masked uint32) error {
		rot := masked - 0xa282ead8
		if got, want := rot<<15|rot>>17, crc32.Checksum(data, castagnoli); got != want {
			return fmt.Errorf("%s: unmasked CRC %#x, want %#x", what, got, want)
		}
		return nil
	}
	var out [][]byte
	for len(b) > 0 {
		if len(b) < 12 {
			return out, fmt.Errorf("record %d: header cut short at %d bytes", len(out), len(b))
		}
		n := binary.LittleEndian.Uint64(b[:8])
		if err := check("length", b[:8], binary.LittleEndian.Uint32(b[8:12])); err != nil {
			return out, err
		}
		b = b[12:]
		if uint64(len(b)) < 4 || n > uint64(len(b))-4 {
			return out, fmt.Errorf("record %d: %d bytes of data announced, %d left", len(out), n, len(b))
		}
		if err := check("data", b[:n], binary.LittleEndian.Uint32(b[n:n+4])); err != nil {
			return out, err
		}
		out = append(out, b[:n])
		b = b[n+4:]
	}
	return out, nil
}

// isFileVersion reports whether an Event record holds file_version (3).
func isFileVersion(b []byte) bool {
	found := false
	walk(b, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) {
		found = found || num == 3 && len(v) > 0
	})
	return found
}

// scalars decodes an Event with a step (2) and a Summary (5) of
// Value{tag (1), simple_value (2)}.
func scalars(b []byte) ([]Scalar, error) {
	var step int64
	var summary []byte
	if err := walk(b, func(num protowire.Number, _ protowire.Type, v []byte, n uint64) {
		switch num {
		case 2:
			step = int64(n)
		case 5:
			summary = v
		}
	}); err != nil {
		return nil, err
	}
	var out []Scalar
	err := walk(summary, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) {
		if num != 1 {
			return
		}
		s := Scalar{Step: step}
		walk(v, func(num protowire.Number, _ protowire.Type, f []byte, n uint64) {
			switch num {
			case 1:
				s.Tag = string(f)
			case 2:
				s.Value = math.Float32frombits(uint32(n))
			}
		})
		out = append(out, s)
	})
	return out, err
}

// walk calls fn with each field of a protobuf message: bytes fields'
// contents, numeric fields' values.
func walk(b []byte, fn func(protowire.Number, protowire.Type, []byte, uint64)) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var f uint32
			f, n = protowire.ConsumeFixed32(b)
			x = uint64(f)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		fn(num, typ, v, x)
		b = b[n:]
	}
	return nil
}

// CSV reads a CSV table, header first, failing the test if it does not
// parse or its rows are not all as wide as its header.
func CSV(t testing.TB, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll() // ReadAll checks every row's width against the first
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}
