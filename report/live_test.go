package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/schemas"
)

// liveEvents are a run's metrics as its stream holds them: per update an
// update event, an eval event every other update (the first bringing a
// column the update table lacked), each with its ID.
func liveEvents(updates int) []schemas.MetricsEvent {
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var evs []schemas.MetricsEvent
	for u := int64(1); u <= int64(updates); u++ {
		v := map[string]float64{"success_rate": float64(u) / 10}
		if u >= 3 {
			v["dense_return"] = float64(u) // a column that appears mid-run
		}
		evs = append(evs, schemas.MetricsEvent{Run: "r", Component: "learner", Kind: "update", Time: t0.Add(time.Duration(u) * time.Second),
			Update: u, Values: v, ID: fmt.Sprintf("update/u%d", u)})
		if u%2 == 0 {
			evs = append(evs, schemas.MetricsEvent{Run: "r", Component: "learner", Kind: "eval", Time: t0.Add(time.Duration(u) * time.Second),
				Update: u, Values: map[string]float64{"success_rate": 0.5}, Labels: map[string]string{"split": "eval"},
				ID: fmt.Sprintf("eval/u%d/eval", u)})
		}
	}
	return evs
}

// onDisk is what a reader finds in a report directory: the journal's
// events, each CSV's rows (header first), and the event file's records,
// every checksum checked.
type onDisk struct {
	journal []schemas.MetricsEvent
	csv     map[string][][]string
	records []tbEvent
}

func readDisk(t *testing.T, dir string) onDisk {
	t.Helper()
	var d onDisk
	b, err := os.ReadFile(filepath.Join(dir, JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		var m schemas.MetricsEvent
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("journal line %q: %v", line, err)
		}
		d.journal = append(d.journal, m)
	}
	d.csv = map[string][][]string{}
	paths, _ := filepath.Glob(filepath.Join(dir, "metrics_*.csv"))
	for _, p := range paths {
		d.csv[strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "metrics_"), ".csv")] = readCSV(t, p)
	}
	_, d.records = readEventFile(t, dir)
	return d
}

// check fails unless the directory holds exactly want, each event once,
// in order, in all three tables.
func (d onDisk) check(t *testing.T, want []schemas.MetricsEvent) {
	t.Helper()
	ids := func(evs []schemas.MetricsEvent) []string {
		var out []string
		for _, m := range evs {
			out = append(out, m.ID)
		}
		return out
	}
	if got := ids(d.journal); !slices.Equal(got, ids(want)) {
		t.Errorf("journal holds %v, want %v", got, ids(want))
	}
	for _, kind := range kinds(want) {
		var updates []string
		for _, m := range ofKind(want, kind) {
			updates = append(updates, fmt.Sprint(m.Update))
		}
		rows := d.csv[kind]
		var got []string
		for _, r := range rows[min(1, len(rows)):] {
			got = append(got, r[3]) // the update column
		}
		if !slices.Equal(got, updates) {
			t.Errorf("metrics_%s.csv rows of updates %v, want %v", kind, got, updates)
		}
		if len(rows) > 0 && len(rows[0]) != len(csvHeader(columnsOf(want, kind))) {
			t.Errorf("metrics_%s.csv header %v lacks columns", kind, rows[0])
		}
	}
	if len(d.records) == 0 || d.records[0].fileVersion == "" {
		t.Fatalf("event file does not start with its version: %+v", d.records)
	}
	var steps, wantSteps []int64
	for _, r := range d.records[1:] {
		steps = append(steps, r.step)
	}
	for _, m := range want {
		wantSteps = append(wantSteps, m.Update)
	}
	if !slices.Equal(steps, wantSteps) {
		t.Errorf("event file steps %v, want %v", steps, wantSteps)
	}
}

func columnsOf(evs []schemas.MetricsEvent, kind string) (labels, values []string) {
	values, labels = columns(ofKind(evs, kind))
	return labels, values
}

// Each event is on disk, in all three tables, as soon as Add returns,
// with the file still open: what TensorBoard and a CSV reader see while a
// run trains. A column that appears mid-run widens the table.
func TestLiveWritesEachEventAsItComes(t *testing.T) {
	dir := t.TempDir()
	l, err := OpenLive(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	evs := liveEvents(5)
	for i, m := range evs {
		if added, err := l.Add(m); err != nil || !added {
			t.Fatalf("Add %s: %v, %v", m.ID, added, err)
		}
		readDisk(t, dir).check(t, evs[:i+1])
	}
	header := readDisk(t, dir).csv["update"][0]
	if !slices.Contains(header, "dense_return") {
		t.Errorf("update table header %v lacks the column that appeared at update 3", header)
	}
}

// An event repeated — the same ID (work redone after a restart) or, without
// one, the same event (a message replayed) — is written once; another ID is
// another event.
func TestLiveWritesAnEventOnce(t *testing.T) {
	dir := t.TempDir()
	l, err := OpenLive(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	redo := liveEvents(1)[0]
	redo.Time = redo.Time.Add(time.Minute) // redone later, same figures
	noID := schemas.MetricsEvent{Run: "r", Component: "user", Kind: "mine", Update: 1, Values: map[string]float64{"x": 1}}
	other := noID
	other.Values = map[string]float64{"x": 2}
	for i, c := range []struct {
		m    schemas.MetricsEvent
		want bool
	}{{liveEvents(1)[0], true}, {redo, false}, {noID, true}, {noID, false}, {other, true}} {
		if added, err := l.Add(c.m); err != nil || added != c.want {
			t.Errorf("Add %d: added %v (%v), want %v", i, added, err, c.want)
		}
	}
	if n := len(readDisk(t, dir).journal); n != 3 {
		t.Errorf("journal holds %d events, want 3", n)
	}
}

// A run killed mid-write leaves a journal line and an event record cut
// short (and the record of an event the journal never got); reopened, the
// directory is cut back to what the journal holds, and the run, replaying
// its stream from the start, appends only what is new: every event once.
func TestLiveResumesWhereAKilledRunStopped(t *testing.T) {
	dir := t.TempDir()
	evs := liveEvents(6)
	l, err := OpenLive(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range evs[:4] {
		if _, err := l.Add(m); err != nil {
			t.Fatal(err)
		}
	}
	// The kill: event 4 reached the event file, then half of event 5's
	// record and half of its journal line were written.
	tb := l.tb.path
	if err := l.tb.add(evs[4]); err != nil {
		t.Fatal(err)
	}
	half := appendRecord(nil, scalarEvent(evs[5]))
	appendTo(t, tb, half[:len(half)/2])
	line, _ := json.Marshal(evs[4])
	appendTo(t, filepath.Join(dir, JournalFile), line[:len(line)/2])
	l.Close()

	l, err = OpenLive(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	readDisk(t, dir).check(t, evs[:4])
	for _, m := range evs { // the restarted run replays its stream from the start
		if _, err := l.Add(m); err != nil {
			t.Fatal(err)
		}
	}
	readDisk(t, dir).check(t, evs)
	if files, _ := filepath.Glob(filepath.Join(dir, eventFilePrefix+"*")); len(files) != 1 || files[0] != tb {
		t.Errorf("event files %v, want the one the run began, %s", files, tb)
	}
}

// A directory whose event file was lost, or whose event file holds fewer
// events than the journal, gets them back from the journal.
func TestLiveRestoresTheEventFileFromTheJournal(t *testing.T) {
	for _, name := range []string{"lost", "short"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			evs := liveEvents(4)
			if _, err := Write(dir, evs, nil); err != nil {
				t.Fatal(err)
			}
			path, _ := readEventFile(t, dir)
			if name == "lost" {
				os.Remove(path)
			} else {
				b, _ := os.ReadFile(path)
				ends := recordEnds(b)
				os.WriteFile(path, b[:ends[2]], 0o644) // the version and two events
			}
			l, err := OpenLive(dir)
			if err != nil {
				t.Fatal(err)
			}
			l.Close()
			readDisk(t, dir).check(t, evs)
		})
	}
}

// A journal line that is whole but not an event is an error naming the
// line, not a silent loss of the events after it.
func TestLiveRefusesACorruptJournal(t *testing.T) {
	dir := t.TempDir()
	if _, err := Write(dir, liveEvents(2), nil); err != nil {
		t.Fatal(err)
	}
	appendTo(t, filepath.Join(dir, JournalFile), []byte("{not json}\n"))
	_, err := OpenLive(dir)
	if err == nil || !strings.Contains(err.Error(), "line 4") {
		t.Fatalf("got %v, want an error naming line 4", err)
	}
}

// WritePage from a list of events with repeats writes what Live writes of
// them: the same journal and tables.
func TestWritePageAndLiveAgree(t *testing.T) {
	evs := liveEvents(4)
	withRepeats := append(slices.Clone(evs), evs[1], evs[3])
	a, b := t.TempDir(), t.TempDir()
	if _, err := Write(a, withRepeats, nil); err != nil {
		t.Fatal(err)
	}
	l, err := OpenLive(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range withRepeats {
		if _, err := l.Add(m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Finish(Page{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{JournalFile, "metrics_update.csv", "metrics_eval.csv"} {
		x, _ := os.ReadFile(filepath.Join(a, name))
		y, _ := os.ReadFile(filepath.Join(b, name))
		if !bytes.Equal(x, y) || len(x) == 0 {
			t.Errorf("%s differs between WritePage and Live", name)
		}
	}
	readDisk(t, a).check(t, evs)
}

func appendTo(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}
