package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rspo-dev/rspo/schemas"
)

// JournalFile is the name of the events' JSON lines in a report directory:
// the record the other tables are rebuilt from when a run resumes.
const JournalFile = "metrics.jsonl"

// Live keeps a report directory's tables in step with a run while it
// trains: Add appends each new event to metrics.jsonl, its
// metrics_<kind>.csv and the TensorBoard event file, and the bytes are in
// the operating system's hands when Add returns, so a killed process
// loses none of them. Finish writes the plots, summary.json and
// report.html from the events added.
//
// Opening a directory an earlier Live wrote (a resumed run) reads its
// events back, cuts off a line or record a kill left half-written,
// rebuilds the CSVs from metrics.jsonl and goes on appending. Add skips
// an event the directory holds already (eventKey), so a run that replays
// its metrics stream from the start after a restart appends only what is
// new, and work redone after the last checkpoint, which reports under the
// same IDs, appears once.
//
// A Live is not safe for concurrent use.
type Live struct {
	dir     string
	journal *os.File
	tb      *eventFile
	tables  map[string]*csvTable
	seen    map[string]bool
	events  []schemas.MetricsEvent
}

// OpenLive opens (creating it if need be) the report directory dir for
// appending, as described on Live.
func OpenLive(dir string) (*Live, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	journal, events, err := openJournal(filepath.Join(dir, JournalFile))
	if err != nil {
		return nil, err
	}
	l := &Live{dir: dir, journal: journal, tables: map[string]*csvTable{}, seen: map[string]bool{}, events: events}
	for _, m := range events {
		l.seen[eventKey(m)] = true
	}
	if err := l.openTables(); err != nil {
		l.Close()
		return nil, err
	}
	if l.tb, err = openEventFile(dir, events); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// openTables rewrites every metrics_<kind>.csv from the events read back,
// removing those of kinds the journal does not hold (an older report's).
func (l *Live) openTables() error {
	for _, pattern := range []string{csvPrefix + "*.csv", csvPrefix + "*.csv.tmp"} { // .tmp: a rewrite a kill cut short
		if err := removeGlob(l.dir, pattern); err != nil {
			return err
		}
	}
	for _, kind := range kinds(l.events) {
		t := &csvTable{path: filepath.Join(l.dir, csvPrefix+kind+".csv")}
		l.tables[kind] = t
		if err := t.load(ofKind(l.events, kind)); err != nil {
			return err
		}
	}
	return nil
}

// Add writes m to the directory's tables unless it holds it already, and
// reports whether it did. Non-finite values are dropped (JSON cannot carry
// them).
func (l *Live) Add(m schemas.MetricsEvent) (bool, error) {
	m = finiteCopy(m)
	key := eventKey(m)
	if l.seen[key] {
		return false, nil
	}
	// The journal last: on a kill between the writes, the other files hold
	// at most this event more than it, which OpenLive cuts off.
	if err := l.tb.add(m); err != nil {
		return false, err
	}
	t := l.tables[m.Kind]
	if t == nil {
		t = &csvTable{path: filepath.Join(l.dir, csvPrefix+m.Kind+".csv")}
		l.tables[m.Kind] = t
	}
	if err := t.add(m); err != nil {
		return false, err
	}
	if err := appendJournal(l.journal, m); err != nil {
		return false, err
	}
	l.seen[key] = true
	l.events = append(l.events, m)
	return true, nil
}

// Events returns the events the directory holds, in the order added.
func (l *Live) Events() []schemas.MetricsEvent {
	return append([]schemas.MetricsEvent(nil), l.events...)
}

// Close closes the open files; Finish closes them too.
func (l *Live) Close() error {
	var errs []error
	if l.journal != nil {
		errs = append(errs, l.journal.Close())
	}
	if l.tb != nil {
		errs = append(errs, l.tb.close())
	}
	for _, t := range l.tables {
		errs = append(errs, t.close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// paths lists the files Live keeps: metrics.jsonl, the CSVs by kind, the
// event file.
func (l *Live) paths() []string {
	out := []string{l.journal.Name()}
	for _, kind := range kinds(l.events) {
		out = append(out, l.tables[kind].path)
	}
	return append(out, l.tb.path)
}

// eventKey names an event for Add's test of what a directory holds: its
// ID, scoped by run and component, or for an event without one its whole
// JSON form (a message replayed from the stream is the same bytes).
func eventKey(m schemas.MetricsEvent) string {
	if m.ID != "" {
		return "id\x00" + m.Run + "\x00" + m.Component + "\x00" + m.ID
	}
	b, _ := json.Marshal(m) // finite values, strings and a time: always encodes
	return "event\x00" + string(b)
}

// removeGlob removes the files of dir matching pattern.
func removeGlob(dir, pattern string) error {
	paths, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	for _, p := range paths {
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	return nil
}
