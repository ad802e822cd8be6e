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

// writeEvents replaces the event files of earlier reports in dir by one
// holding events, created at now, and returns its path.
func writeEvents(dir string, events []schemas.MetricsEvent, now time.Time) (string, error) {
	if err := removeEventFiles(dir); err != nil {
		return "", err
	}
	path := filepath.Join(dir, eventFileName(now))
	b := appendRecord(nil, fileVersionEvent(now))
	for _, m := range byStep(events) {
		if data := scalarEvent(m); data != nil {
			b = appendRecord(b, data)
		}
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return "", fmt.Errorf("report: %w", err)
	}
	return path, nil
}

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

// byStep orders events by Update, keeping arrival order among equal ones:
// TensorBoard drops a tag's points at or after a step that comes again.
func byStep(events []schemas.MetricsEvent) []schemas.MetricsEvent {
	out := append([]schemas.MetricsEvent(nil), events...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Update < out[j].Update })
	return out
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
