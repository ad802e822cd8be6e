// Package report turns a run's metrics events into the files a user reads
// after training: the raw events as JSON lines, one CSV table per kind of
// event, plots of the learning curves, a TensorBoard event file, a
// summary.json of final figures, and report.html, one page holding the
// summary and the plots with nothing to load beside it.
//
// It knows nothing about NATS: the caller collects schemas.MetricsEvent
// values (live, or by replaying rspo.<run>.metrics.>) and hands them over.
//
// # Tables
//
// metrics_<kind>.csv has one row per event of that kind. Its first columns
// are the event's own fields time, component, cycle and update (update is
// always the event's Update: the learner update the figures belong to);
// then come a column per label and a column per value, each sorted by
// name. A label or value named like a column before it gets the prefix
// label_ or value_: the trainer's own update counter, a value named update
// in update and explore events, is the column value_update. x_update, in
// explore events, is a value too: the explorer update's place between the
// learner updates, the x of the explorer's curves.
//
// # Plots and page
//
// Each plot of DefaultPlots stacks its panels over one x axis, with each
// panel's legend below it; dense_return_vs_success.png gives true success
// and dense return a panel each. Points are drawn as marks, so a run
// evaluated once still shows its evaluation. clip_fractions.png, when every
// fraction is 0 (one epoch and one minibatch, the defaults), says why under
// the plot. report.html repeats each plot's title and note as its caption.
//
// # TensorBoard
//
// The event file events.out.tfevents.<unix seconds>.<host>.rspo holds one
// scalar per finite value of every event, so `tensorboard --logdir runs/`
// shows each run's report directory as a run. The step is the event's
// Update, the wall time its Time. The tag is <kind>/<name>; a labelled
// event inserts its label values (ordered by label name, a leading
// "<kind>_" dropped) between the two, so an eval event with split
// eval_in_distribution gives eval/in_distribution/success_rate. TensorBoard
// keeps one point per tag and step: of several events of one kind and
// Update (the explorer's updates within one learner update) it shows the
// last. Writing a report again replaces the event files earlier reports
// left in the directory.
package report

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/rspo-dev/rspo/schemas"
)

// Write creates dir and writes metrics.jsonl, metrics_<kind>.csv, the
// TensorBoard event file, the plots of DefaultPlots that have data,
// summary.json (the given summary value, marshalled as indented JSON) and
// report.html (the summary and the plots in one self-contained page). It
// returns the paths written.
func Write(dir string, events []schemas.MetricsEvent, summary any) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	var out outputs
	if !out.add(writeJSONL(filepath.Join(dir, "metrics.jsonl"), events)) {
		return out.paths, out.err()
	}
	for _, kind := range kinds(events) {
		path := filepath.Join(dir, "metrics_"+kind+".csv")
		if !out.add(path, writeCSV(path, ofKind(events, kind))) {
			return out.paths, out.err()
		}
	}
	if !out.add(writeEvents(dir, events, time.Now())) {
		return out.paths, out.err()
	}
	var figs []figure
	for _, spec := range DefaultPlots {
		f, err := spec.render(dir, events)
		if out.add(f.path, err) && f.path != "" {
			figs = append(figs, f)
		}
	}
	if summary != nil {
		path := filepath.Join(dir, "summary.json")
		out.add(path, writeJSON(path, summary))
	}
	out.add(writeHTML(dir, htmlTitle(events), summary, figs))
	return out.paths, out.err()
}

// outputs gathers the paths written and the errors met.
type outputs struct {
	paths []string
	errs  []error
}

// add records path (if not empty) or err, and reports whether err is nil.
func (o *outputs) add(path string, err error) bool {
	if err != nil {
		o.errs = append(o.errs, err)
		return false
	}
	if path != "" {
		o.paths = append(o.paths, path)
	}
	return true
}

func (o *outputs) err() error { return errors.Join(o.errs...) }

func writeJSONL(path string, events []schemas.MetricsEvent) (string, error) {
	f, err := os.Create(path)
	if err != nil {
		return "", fmt.Errorf("report: %w", err)
	}
	enc := json.NewEncoder(f)
	for _, m := range events {
		if err := enc.Encode(finiteCopy(m)); err != nil {
			f.Close()
			return "", fmt.Errorf("report: %s: %w", path, err)
		}
	}
	return path, f.Close()
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

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("report: summary: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// eventColumns are the CSV columns of an event's own fields.
var eventColumns = []string{"time", "component", "cycle", "update"}

// writeCSV writes one row per event with a column per label and value
// name (see the package doc for how clashing names are renamed).
func writeCSV(path string, events []schemas.MetricsEvent) error {
	valueCols, labelCols := columns(events)
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	w := csv.NewWriter(f)
	w.Write(csvHeader(labelCols, valueCols))
	for _, m := range events {
		w.Write(csvRow(m, labelCols, valueCols))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return fmt.Errorf("report: %s: %w", path, err)
	}
	return f.Close()
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

func kinds(events []schemas.MetricsEvent) []string {
	seen := map[string]bool{}
	for _, m := range events {
		seen[m.Kind] = true
	}
	return sortedKeys(seen)
}

func ofKind(events []schemas.MetricsEvent, kind string) []schemas.MetricsEvent {
	var out []schemas.MetricsEvent
	for _, m := range events {
		if m.Kind == kind {
			out = append(out, m)
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
