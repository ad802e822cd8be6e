package buffersvc

import (
	"errors"
	"os"
	"testing"
)

func asideEntry(run, id string) Entry {
	return Entry{Run: run, Cycle: 1, ID: id, TaskID: "t", Data: []byte(run + id)}
}

// A rebuild aside replaces one run's records and keeps every other run's;
// one that fails leaves the store as it was and nothing beside it.
func TestRebuildAsideReplacesOneRunOnly(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Put([]Entry{asideEntry("r", "old"), asideEntry("other", "kept")}); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	err = s.rebuildAside("r", func(fresh *Store) error {
		if _, err := fresh.Put([]Entry{asideEntry("r", "half")}); err != nil {
			t.Fatal(err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("failed build: %v, want its error", err)
	}
	if ids, _ := s.IDs("r", 1); len(ids) != 1 || ids[0] != "old" {
		t.Errorf("after a failed rebuild r holds %v, want [old]", ids)
	}
	if _, err := os.Stat(dir + ".rebuild"); !os.IsNotExist(err) {
		t.Errorf("the failed rebuild's store is left beside: %v", err)
	}

	err = s.rebuildAside("r", func(fresh *Store) error {
		_, err := fresh.Put([]Entry{asideEntry("r", "new")})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if ids, _ := s.IDs("r", 1); len(ids) != 1 || ids[0] != "new" {
		t.Errorf("after the rebuild r holds %v, want [new]", ids)
	}
	if ids, _ := s.IDs("other", 1); len(ids) != 1 || ids[0] != "kept" {
		t.Errorf("after the rebuild other holds %v, want [kept]", ids)
	}
	if data, ok, err := s.Record("other", 1, "kept"); err != nil || !ok || string(data) != "otherkept" {
		t.Errorf("other's record: %q %v %v", data, ok, err)
	}
}
