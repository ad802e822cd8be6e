package report

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/rspo-dev/rspo/schemas"
)

// The event file's name is eventFilePrefix + <unix seconds> + "." + <host>
// + eventFileSuffix; the suffix marks the files this package owns.
const (
	eventFilePrefix = "events.out.tfevents."
	eventFileSuffix = ".rspo"
	fileVersion     = "brain.Event:2"
)

// Field numbers of tensorflow.Event, tensorflow.Summary and
// tensorflow.Summary.Value.
const (
	eventWallTime    protowire.Number = 1
	eventStep        protowire.Number = 2
	eventFileVersion protowire.Number = 3
	eventSummary     protowire.Number = 5
	summaryValue     protowire.Number = 1
	valueTag         protowire.Number = 1
	valueSimpleValue protowire.Number = 2
)

// tag is the TensorBoard tag of value name of m: kind/name, or
// kind/<label values>/name for a labelled event (label values in the order
// of their label names, a leading "<kind>_" dropped, empty ones skipped).
func tag(m schemas.MetricsEvent, name string) string {
	parts := []string{m.Kind}
	names := make([]string, 0, len(m.Labels))
	for k := range m.Labels {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if v := strings.TrimPrefix(m.Labels[k], m.Kind+"_"); v != "" {
			parts = append(parts, v)
		}
	}
	return strings.Join(append(parts, name), "/")
}

// eventFile is the directory's TensorBoard event file, open for
// appending: one record per event with a finite value, in the order added.
type eventFile struct {
	path string
	f    *os.File
}

// openEventFile opens dir's event file in step with events, the ones the
// journal holds: the one file a Live wrote goes on, cut back to those
// events (a kill may have left a record more, or half of one) or given
// those it lacks; otherwise the directory's event files (none, several, or
// one without a valid first record) are replaced by a new file holding
// events.
func openEventFile(dir string, events []schemas.MetricsEvent) (*eventFile, error) {
	var data [][]byte
	for _, m := range events {
		if d := scalarEvent(m); d != nil {
			data = append(data, d)
		}
	}
	paths, err := filepath.Glob(filepath.Join(dir, eventFilePrefix+"*"+eventFileSuffix))
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	if len(paths) == 1 {
		if ef, err := resumeEventFile(paths[0], data); err != nil || ef != nil {
			return ef, err
		}
	}
	if err := removeEventFiles(dir); err != nil {
		return nil, err
	}
	now := time.Now()
	ef := &eventFile{path: filepath.Join(dir, eventFileName(now))}
	if ef.f, err = os.OpenFile(ef.path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return ef, ef.write(append([][]byte{fileVersionEvent(now)}, data...)...)
}

// resumeEventFile opens path, whose records after the first (the file
// version) are data's first ones, and cuts it to len(data) records or adds
// those it lacks. It returns nil when the file has no valid first record.
func resumeEventFile(path string, data [][]byte) (*eventFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	ends := recordEnds(b)
	if len(ends) == 0 {
		return nil, nil
	}
	keep := min(len(ends)-1, len(data))
	ef := &eventFile{path: path}
	if ef.f, err = os.OpenFile(path, os.O_RDWR, 0); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	if err := truncateTo(ef.f, int64(ends[keep])); err != nil {
		ef.close()
		return nil, err
	}
	return ef, ef.write(data[keep:]...)
}

// recordEnds returns the offset after each whole record of b whose length
// and data checksums hold, up to the first that is cut short or fails.
func recordEnds(b []byte) []int {
	var ends []int
	off := 0
	for len(b)-off >= 12 {
		n, rest := binary.LittleEndian.Uint64(b[off:off+8]), uint64(len(b)-off-12) // rest: after the length's CRC
		if binary.LittleEndian.Uint32(b[off+8:off+12]) != maskedCRC(b[off:off+8]) || rest < 4 || n > rest-4 {
			break
		}
		data := b[off+12 : off+12+int(n)]
		if binary.LittleEndian.Uint32(b[off+12+int(n):]) != maskedCRC(data) {
			break
		}
		off += 16 + int(n)
		ends = append(ends, off)
	}
	return ends
}

// add appends m's scalars, if it has any finite value.
func (ef *eventFile) add(m schemas.MetricsEvent) error {
	if data := scalarEvent(m); data != nil {
		return ef.write(data)
	}
	return nil
}

// write appends the records in one write.
func (ef *eventFile) write(records ...[]byte) error {
	var b []byte
	for _, r := range records {
		b = appendRecord(b, r)
	}
	if _, err := ef.f.Write(b); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

func (ef *eventFile) close() error { return ef.f.Close() }

func eventFileName(now time.Time) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	host = strings.NewReplacer("/", "_", string(filepath.Separator), "_").Replace(host)
	return eventFilePrefix + strconv.FormatInt(now.Unix(), 10) + "." + host + eventFileSuffix
}

func removeEventFiles(dir string) error {
	old, err := filepath.Glob(filepath.Join(dir, eventFilePrefix+"*"+eventFileSuffix))
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	for _, p := range old {
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	return nil
}

// appendRecord frames data as one TFRecord: length, masked CRC of the
// length, data, masked CRC of the data.
func appendRecord(b, data []byte) []byte {
	n := binary.LittleEndian.AppendUint64(nil, uint64(len(data)))
	b = append(b, n...)
	b = binary.LittleEndian.AppendUint32(b, maskedCRC(n))
	b = append(b, data...)
	return binary.LittleEndian.AppendUint32(b, maskedCRC(data))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maskedCRC is the CRC-32C of b, rotated and offset as TFRecord asks.
func maskedCRC(b []byte) uint32 {
	c := crc32.Checksum(b, castagnoli)
	return (c>>15 | c<<17) + 0xa282ead8
}

func fileVersionEvent(now time.Time) []byte {
	b := appendWallTime(nil, now)
	b = protowire.AppendTag(b, eventFileVersion, protowire.BytesType)
	return protowire.AppendString(b, fileVersion)
}

// scalarEvent encodes m's finite values as one Event at step m.Update, or
// returns nil when m has none.
func scalarEvent(m schemas.MetricsEvent) []byte {
	var summary []byte
	for _, name := range sortedValueNames(m.Values) {
		v := m.Values[name]
		if !finite(v) {
			continue
		}
		summary = protowire.AppendTag(summary, summaryValue, protowire.BytesType)
		summary = protowire.AppendBytes(summary, scalarValue(tag(m, name), v))
	}
	if summary == nil {
		return nil
	}
	b := appendWallTime(nil, m.Time)
	b = protowire.AppendTag(b, eventStep, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(m.Update))
	b = protowire.AppendTag(b, eventSummary, protowire.BytesType)
	return protowire.AppendBytes(b, summary)
}

func scalarValue(name string, v float64) []byte {
	b := protowire.AppendTag(nil, valueTag, protowire.BytesType)
	b = protowire.AppendString(b, name)
	b = protowire.AppendTag(b, valueSimpleValue, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, math.Float32bits(float32(v)))
}

func appendWallTime(b []byte, t time.Time) []byte {
	secs := float64(t.Unix()) + float64(t.Nanosecond())/1e9
	b = protowire.AppendTag(b, eventWallTime, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, math.Float64bits(secs))
}

func sortedValueNames(values map[string]float64) []string {
	names := make([]string, 0, len(values))
	for k := range values {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
