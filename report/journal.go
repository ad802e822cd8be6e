package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/rspo-dev/rspo/schemas"
)

// openJournal opens metrics.jsonl at path for appending (creating it) and
// returns the events it holds. A last line without its newline, which a
// process killed mid-write leaves, is cut off; a complete line that is not
// an event is an error naming it.
func openJournal(path string) (*os.File, []schemas.MetricsEvent, error) {
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return nil, nil, fmt.Errorf("report: %w", err)
	}
	whole := bytes.LastIndexByte(b, '\n') + 1
	var events []schemas.MetricsEvent
	for i, line := range bytes.SplitAfter(b[:whole], []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var m schemas.MetricsEvent
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, nil, fmt.Errorf("report: %s line %d is not a metrics event (%w); move the file away to rebuild the report from the run's streams (rspo report)", path, i+1, err)
		}
		events = append(events, m)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("report: %w", err)
	}
	if err := truncateTo(f, int64(whole)); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, events, nil
}

// truncateTo cuts f to size and places its offset at the end, so writes
// append.
func truncateTo(f *os.File, size int64) error {
	if err := f.Truncate(size); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if _, err := f.Seek(size, 0); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// appendJournal writes m as one line in one write.
func appendJournal(f *os.File, m schemas.MetricsEvent) error {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("report: %s: %w", f.Name(), err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// finiteCopy drops non-finite values, which JSON cannot carry.
func finiteCopy(m schemas.MetricsEvent) schemas.MetricsEvent {
	clean := make(map[string]float64, len(m.Values))
	for k, v := range m.Values {
		if finite(v) {
			clean[k] = v
		}
	}
	m.Values = clean
	return m
}
