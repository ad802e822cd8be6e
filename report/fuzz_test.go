package report

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzRecordEnds feeds arbitrary bytes as an event file: the records kept
// are a prefix of whole records whose checksums hold, never past the end.
func FuzzRecordEnds(f *testing.F) {
	valid := appendRecord(appendRecord(nil, []byte("version")), []byte("data"))
	f.Add(valid)
	f.Add(valid[:len(valid)-3])
	f.Add([]byte{})
	f.Add(append(append([]byte(nil), valid...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		ends := recordEnds(b)
		prev := 0
		for _, end := range ends {
			if end <= prev || end > len(b) {
				t.Fatalf("record ends %v out of order or past %d bytes", ends, len(b))
			}
			prev = end
		}
		again := recordEnds(b[:prev])
		if len(again) != len(ends) {
			t.Fatalf("the kept prefix reads as %d records, not %d", len(again), len(ends))
		}
	})
}

// FuzzOpenJournal feeds arbitrary bytes as metrics.jsonl: OpenLive either
// refuses it with an error or opens it, and what it opened reopens alike.
func FuzzOpenJournal(f *testing.F) {
	f.Add([]byte(`{"run":"r","component":"learner","kind":"update","update":1,"values":{"x":1},"id":"update/u1"}` + "\n"))
	f.Add([]byte(`{"run":"r"}` + "\n" + `{"run":`))
	f.Add([]byte("\n\n"))
	f.Add([]byte(`{"values":{"x":1e999}}` + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, JournalFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := OpenLive(dir)
		if err != nil {
			return
		}
		n := len(l.Events())
		l.Close()
		l, err = OpenLive(dir)
		if err != nil {
			t.Fatalf("reopening what opened: %v", err)
		}
		defer l.Close()
		if len(l.Events()) != n {
			t.Fatalf("reopened with %d events, first opened with %d", len(l.Events()), n)
		}
	})
}
