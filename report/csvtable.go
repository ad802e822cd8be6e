package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"slices"
	"strconv"

	"github.com/rspo-dev/rspo/schemas"
)

// csvPrefix starts the name of every table of events by kind.
const csvPrefix = "metrics_"

// eventColumns are the CSV columns of an event's own fields.
var eventColumns = []string{"time", "component", "cycle", "update"}

// csvTable is metrics_<kind>.csv, kept in step with the events of its kind:
// a row is appended per event, and an event that brings a label or value
// no earlier one had rewrites the file with the wider header (written
// aside, then renamed over it, so a reader never sees half a table).
type csvTable struct {
	path           string
	events         []schemas.MetricsEvent
	labels, values []string // sorted
	f              *os.File
}

// load writes the table of events afresh.
func (t *csvTable) load(events []schemas.MetricsEvent) error {
	t.events = append(t.events[:0], events...)
	t.values, t.labels = columns(events)
	return t.rewrite()
}

// add appends m's row, or rewrites the table when m has a new column.
func (t *csvTable) add(m schemas.MetricsEvent) error {
	t.events = append(t.events, m)
	values, labels := columns([]schemas.MetricsEvent{m})
	if t.f == nil || !subset(values, t.values) || !subset(labels, t.labels) {
		t.values, t.labels = mergeNames(t.values, values), mergeNames(t.labels, labels)
		return t.rewrite()
	}
	b, err := t.encode(m)
	if err != nil {
		return err
	}
	if _, err := t.f.Write(b); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// rewrite writes the header and every row aside and renames it over the
// table, then reopens it for appending.
func (t *csvTable) rewrite() error {
	b, err := t.encode(t.events...)
	if err != nil {
		return err
	}
	var head bytes.Buffer
	w := csv.NewWriter(&head)
	w.Write(csvHeader(t.labels, t.values))
	w.Flush()
	tmp := t.path + ".tmp"
	if err := os.WriteFile(tmp, append(head.Bytes(), b...), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.Rename(tmp, t.path); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := t.close(); err != nil {
		return err
	}
	f, err := os.OpenFile(t.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	t.f = f
	return nil
}

// encode renders rows of events under the table's columns.
func (t *csvTable) encode(events ...schemas.MetricsEvent) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	for _, m := range events {
		w.Write(csvRow(m, t.labels, t.values))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return nil, fmt.Errorf("report: %s: %w", t.path, err)
	}
	return b.Bytes(), nil
}

func (t *csvTable) close() error {
	if t.f == nil {
		return nil
	}
	err := t.f.Close()
	t.f = nil
	return err
}

func csvRow(m schemas.MetricsEvent, labelCols, valueCols []string) []string {
	row := []string{m.Time.UTC().Format("2006-01-02T15:04:05.000Z"), m.Component,
		strconv.FormatInt(m.Cycle, 10), strconv.FormatInt(m.Update, 10)}
	for _, c := range labelCols {
		row = append(row, m.Labels[c])
	}
	for _, c := range valueCols {
		cell := ""
		if v, ok := m.Values[c]; ok {
			cell = strconv.FormatFloat(v, 'g', 6, 64)
		}
		row = append(row, cell)
	}
	return row
}

// csvHeader names the columns: the event's fields, then the labels, then
// the values. A label or value whose name is already a column's gets the
// prefix label_ or value_, repeated until the name is new and no other
// label's or value's.
func csvHeader(labels, values []string) []string {
	names := map[string]bool{}
	for _, list := range [][]string{eventColumns, labels, values} {
		for _, c := range list {
			names[c] = true
		}
	}
	header := append([]string(nil), eventColumns...)
	used := map[string]bool{}
	for _, c := range eventColumns {
		used[c] = true
	}
	claim := func(name, prefix string) string {
		if used[name] {
			name = prefix + name
			for used[name] || names[name] {
				name = prefix + name
			}
		}
		used[name] = true
		return name
	}
	for _, c := range labels {
		header = append(header, claim(c, "label_"))
	}
	for _, c := range values {
		header = append(header, claim(c, "value_"))
	}
	return header
}

func columns(events []schemas.MetricsEvent) (values, labels []string) {
	vs, ls := map[string]bool{}, map[string]bool{}
	for _, m := range events {
		for k := range m.Values {
			vs[k] = true
		}
		for k := range m.Labels {
			ls[k] = true
		}
	}
	return sortedKeys(vs), sortedKeys(ls)
}

// subset reports whether every name of a (sorted) is in b (sorted).
func subset(a, b []string) bool {
	for _, s := range a {
		if _, ok := slices.BinarySearch(b, s); !ok {
			return false
		}
	}
	return true
}

// mergeNames merges two sorted lists of names.
func mergeNames(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}
