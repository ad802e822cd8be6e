// Package report turns a run's metrics events into the files a user reads
// while and after training: the raw events as JSON lines, one CSV table per
// kind of event and a TensorBoard event file, all three appended to as the
// events come (Live); then plots of the learning curves, a summary.json of
// final figures, and report.html, one page leading with the result (a
// Headline), then the plots, then the summary folded, with nothing to load
// beside it.
//
// It knows nothing about NATS: the caller collects schemas.MetricsEvent
// values (live, or by replaying rspo.<run>.metrics.>) and hands them over.
//
// # Live tables and restarts
//
// Live appends each event to metrics.jsonl, its CSV and the event file as
// it is added, so `tensorboard --logdir runs/` and a reader of the CSVs
// see a run as it trains, and a killed run keeps every row written. A
// Live opened on a directory that holds tables already (a resumed run)
// reads metrics.jsonl back, cuts off what a kill left half-written, and
// skips every event it holds: one with an ID (schemas.MetricsEvent.ID)
// once per ID, so work redone after a restart appears once; one without,
// once per identical event. WritePage writes the same tables afresh from a
// list of events.
//
// # Tables
//
// metrics_<kind>.csv has one row per event of that kind, in the order
// added; an event with a label or value no earlier one had rewrites the
// table with the wider header. Its first columns are the event's own
// fields time, component, cycle and update (update is always the event's
// Update: the learner update the figures belong to); then come a column per label and a column per value, each sorted by
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
// Update, the wall time its Time; records follow the events' order (a
// step that comes again, after a restart, makes TensorBoard drop that
// tag's later points and take the new ones). The tag is <kind>/<name>; a
// labelled event inserts its label values (ordered by label name, a leading
// "<kind>_" dropped) between the two, so an eval event with split
// eval_in_distribution gives eval/in_distribution/success_rate. TensorBoard
// keeps one point per tag and step: of several events of one kind and
// Update (the explorer's updates within one learner update) it shows the
// last. WritePage replaces the event files earlier reports left in the
// directory; Live goes on with the one it finds.
package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/rspo-dev/rspo/schemas"
)

// Page is what report.html shows beside the plots: the headline of the
// result first, the raw summary last, folded.
type Page struct {
	// Headline, if set, opens the page.
	Headline *Headline
	// Summary, if set, is written as summary.json and at the page's end.
	Summary any
}

// Write writes the report of events into dir as WritePage does, with
// summary as the page's summary.
func Write(dir string, events []schemas.MetricsEvent, summary any) ([]string, error) {
	return WritePage(dir, events, Page{Summary: summary})
}

// WritePage creates dir and writes the report of events afresh, replacing
// the tables and event file an earlier report left: metrics.jsonl,
// metrics_<kind>.csv and the TensorBoard event file (each event once, see
// Live), the plots of DefaultPlots that have data, summary.json and
// report.html. It returns the paths written.
func WritePage(dir string, events []schemas.MetricsEvent, page Page) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	for _, pattern := range []string{JournalFile, csvPrefix + "*.csv", eventFilePrefix + "*" + eventFileSuffix} {
		if err := removeGlob(dir, pattern); err != nil {
			return nil, err
		}
	}
	l, err := OpenLive(dir)
	if err != nil {
		return nil, err
	}
	for _, m := range events {
		if _, err := l.Add(m); err != nil {
			l.Close()
			return nil, err
		}
	}
	return l.Finish(page)
}

// Finish closes the tables and writes the plots of DefaultPlots that have
// data, summary.json (page.Summary as indented JSON, if set) and
// report.html from the events added. It returns every path of the report:
// the tables' and those it wrote.
func (l *Live) Finish(page Page) ([]string, error) {
	var out outputs
	out.paths = l.paths()
	out.add("", l.Close())
	var figs []figure
	for _, spec := range DefaultPlots {
		f, err := spec.render(l.dir, l.events)
		if out.add(f.path, err) && f.path != "" {
			figs = append(figs, f)
		}
	}
	if page.Summary != nil {
		path := filepath.Join(l.dir, "summary.json")
		out.add(path, writeJSON(path, page.Summary))
	}
	out.add(writeHTML(l.dir, htmlTitle(l.events), page, figs))
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
