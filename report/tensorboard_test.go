package report

import (
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/rspo-dev/rspo/schemas"
)

// tbEvent is a decoded tensorflow.Event, as far as reports use it.
type tbEvent struct {
	wallTime    float64
	step        int64
	fileVersion string
	values      []tbValue
}

type tbValue struct {
	tag   string
	value float32
}

// readRecords splits a TFRecord file into its records' data, checking the
// framing and both checksums.
func readRecords(t *testing.T, b []byte) [][]byte {
	t.Helper()
	table := crc32.MakeTable(crc32.Castagnoli)
	check := func(what string, data []byte, masked uint32) {
		rot := masked - 0xa282ead8
		if got, want := rot<<15|rot>>17, crc32.Checksum(data, table); got != want {
			t.Fatalf("%s: unmasked CRC %#x, want %#x", what, got, want)
		}
	}
	var out [][]byte
	for len(b) > 0 {
		if len(b) < 12 {
			t.Fatalf("truncated record header: %d bytes left", len(b))
		}
		n := binary.LittleEndian.Uint64(b[:8])
		check("length", b[:8], binary.LittleEndian.Uint32(b[8:12]))
		b = b[12:]
		if uint64(len(b)) < n+4 {
			t.Fatalf("truncated record: want %d+4 bytes, have %d", n, len(b))
		}
		data := b[:n]
		check("data", data, binary.LittleEndian.Uint32(b[n:n+4]))
		out = append(out, data)
		b = b[n+4:]
	}
	return out
}

// decodeEvent decodes an Event, failing on any field a report should not
// write.
func decodeEvent(t *testing.T, b []byte) tbEvent {
	t.Helper()
	var e tbEvent
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatalf("event tag: %v", protowire.ParseError(n))
		}
		b = b[n:]
		switch {
		case num == 1 && typ == protowire.Fixed64Type:
			v, m := protowire.ConsumeFixed64(b)
			e.wallTime, n = math.Float64frombits(v), m
		case num == 2 && typ == protowire.VarintType:
			v, m := protowire.ConsumeVarint(b)
			e.step, n = int64(v), m
		case num == 3 && typ == protowire.BytesType:
			e.fileVersion, n = protowire.ConsumeString(b)
		case num == 5 && typ == protowire.BytesType:
			var s []byte
			s, n = protowire.ConsumeBytes(b)
			e.values = append(e.values, decodeSummary(t, s)...)
		default:
			t.Fatalf("unexpected event field %d (wire type %d)", num, typ)
		}
		if n < 0 {
			t.Fatalf("event field %d: %v", num, protowire.ParseError(n))
		}
		b = b[n:]
	}
	return e
}

func decodeSummary(t *testing.T, b []byte) []tbValue {
	t.Helper()
	var out []tbValue
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num != 1 || typ != protowire.BytesType {
			t.Fatalf("summary field %d (wire type %d)", num, typ)
		}
		v, m := protowire.ConsumeBytes(b[n:])
		if m < 0 {
			t.Fatalf("summary value: %v", protowire.ParseError(m))
		}
		out = append(out, decodeValue(t, v))
		b = b[n+m:]
	}
	return out
}

func decodeValue(t *testing.T, b []byte) tbValue {
	t.Helper()
	var v tbValue
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatalf("value tag: %v", protowire.ParseError(n))
		}
		b = b[n:]
		switch {
		case num == 1 && typ == protowire.BytesType:
			v.tag, n = protowire.ConsumeString(b)
		case num == 2 && typ == protowire.Fixed32Type:
			var bits uint32
			bits, n = protowire.ConsumeFixed32(b)
			v.value = math.Float32frombits(bits)
		default:
			t.Fatalf("unexpected value field %d (wire type %d)", num, typ)
		}
		if n < 0 {
			t.Fatalf("value field %d: %v", num, protowire.ParseError(n))
		}
		b = b[n:]
	}
	return v
}

// readEventFile returns the path and events of the one event file in dir.
func readEventFile(t *testing.T, dir string) (string, []tbEvent) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "events.out.tfevents.*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 1 {
		t.Fatalf("event files: got %v, want one", paths)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	var events []tbEvent
	for _, r := range readRecords(t, b) {
		events = append(events, decodeEvent(t, r))
	}
	return paths[0], events
}

func TestMaskedCRCGolden(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want uint32
	}{
		{"empty", nil, 0xa282ead8},
		{"check string", []byte("123456789"), 0xc78ab0e5},
		{"length 24", []byte{24, 0, 0, 0, 0, 0, 0, 0}, 0x224b7fa3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := maskedCRC(tt.in); got != tt.want {
				t.Errorf("maskedCRC(%q) = %#x, want %#x", tt.in, got, tt.want)
			}
		})
	}
}

func TestFileVersionRecordGolden(t *testing.T) {
	got := hex.EncodeToString(appendRecord(nil, fileVersionEvent(time.Unix(1, 5e8))))
	want := "1800000000000000a37f4b22" + "09000000000000f83f" + "1a0d627261696e2e4576656e743a32" + "2a28646c"
	if got != want {
		t.Errorf("record:\n got %s\nwant %s", got, want)
	}
}

func TestEventFileRoundTrips(t *testing.T) {
	dir := t.TempDir()
	evs := sampleEvents()
	slices.Reverse(evs) // the file keeps the events' order, as a live one must
	written, err := Write(dir, evs, nil)
	if err != nil {
		t.Fatal(err)
	}
	path, events := readEventFile(t, dir)
	if !slices.Contains(written, path) {
		t.Errorf("Write did not return the event file %s: %v", path, written)
	}
	if !regexp.MustCompile(`^events\.out\.tfevents\.\d+\.[^/]+\.rspo$`).MatchString(filepath.Base(path)) {
		t.Errorf("file name %q", filepath.Base(path))
	}
	if len(events) != 1+12 {
		t.Fatalf("records: got %d, want 13", len(events))
	}
	if events[0].fileVersion != "brain.Event:2" || len(events[0].values) != 0 {
		t.Errorf("first record: %+v", events[0])
	}
	type key struct {
		tag  string
		step int64
	}
	got := map[key]float32{}
	for i, e := range events[1:] {
		if e.fileVersion != "" {
			t.Errorf("record %d repeats the file version", i+1)
		}
		if e.step != evs[i].Update {
			t.Errorf("record %d: step %d, want event %d's %d", i+1, e.step, i, evs[i].Update)
		}
		for _, v := range e.values {
			got[key{v.tag, e.step}] = v.value
		}
	}
	want := map[key]float32{
		{"update/success_rate", 2}:                   0.2,
		{"update/clip_frac_on", 4}:                   0.01,
		{"eval/in_distribution/success_rate", 3}:     0.6,
		{"eval/out_of_distribution/env_steps", 1}:    1000,
		{"eval/out_of_distribution/success_rate", 4}: 0.8,
	}
	for k, w := range want {
		if v, ok := got[k]; !ok || math.Abs(float64(v-w)) > 1e-6 {
			t.Errorf("%s at step %d: got %v (present %v), want %v", k.tag, k.step, v, ok, w)
		}
	}
	for k := range got {
		if strings.HasSuffix(k.tag, "/bad") {
			t.Errorf("non-finite value written as %s", k.tag)
		}
	}
	if n := len(got); n != 4*2+4*2*2 {
		t.Errorf("distinct (tag, step) points: got %d, want 24", n)
	}
}

func TestEventWallTimeIsTheEventsTime(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 3, 4, 5, 6, 7, 250_000_000, time.UTC)
	evs := []schemas.MetricsEvent{{Kind: "update", Time: at, Update: 7, Values: map[string]float64{"loss": -1.5}}}
	if _, err := Write(dir, evs, nil); err != nil {
		t.Fatal(err)
	}
	_, events := readEventFile(t, dir)
	if len(events) != 2 {
		t.Fatalf("records: got %d, want 2", len(events))
	}
	e := events[1]
	if want := float64(at.Unix()) + 0.25; e.wallTime != want {
		t.Errorf("wall time: got %v, want %v", e.wallTime, want)
	}
	if e.step != 7 || len(e.values) != 1 || e.values[0] != (tbValue{"update/loss", -1.5}) {
		t.Errorf("event: %+v", e)
	}
}

func TestWriteReplacesItsOwnEarlierEventFiles(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "events.out.tfevents.1.oldhost.rspo")
	foreign := filepath.Join(dir, "events.out.tfevents.2.oldhost")
	for _, p := range []string{stale, foreign} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Write(dir, sampleEvents(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale event file kept: %v", err)
	}
	if _, err := os.Stat(foreign); err != nil {
		t.Errorf("event file of another writer removed: %v", err)
	}
	ours, _ := filepath.Glob(filepath.Join(dir, "*.rspo"))
	if len(ours) != 1 {
		t.Errorf("event files after writing: %v", ours)
	}
}

func TestTag(t *testing.T) {
	tests := []struct {
		name   string
		kind   string
		labels map[string]string
		want   string
	}{
		{"unlabelled", "update", nil, "update/success_rate"},
		{"kind prefix dropped", "eval", map[string]string{"split": "eval_in_distribution"}, "eval/in_distribution/success_rate"},
		{"other prefix kept", "eval", map[string]string{"split": "train"}, "eval/train/success_rate"},
		{"value equal to kind kept", "eval", map[string]string{"split": "eval"}, "eval/eval/success_rate"},
		{"labels by name", "prm", map[string]string{"target": "step", "source": "easy"}, "prm/easy/step/success_rate"},
		{"empty label skipped", "eval", map[string]string{"split": "", "seed": "3"}, "eval/3/success_rate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := schemas.MetricsEvent{Kind: tt.kind, Labels: tt.labels}
			if got := tag(m, "success_rate"); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
