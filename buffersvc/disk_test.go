package buffersvc_test

import (
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/rspo-dev/rspo/buffersvc"
	"github.com/rspo-dev/rspo/swapper"
	"github.com/rspo-dev/rspo/swapper/swappertest"
)

// diskUsage is the space the files under dir take, as du counts it
// (allocated blocks, preallocated ones too).
func diskUsage(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n += info.Sys().(*syscall.Stat_t).Blocks * 512
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A closed store takes about the space of the records it holds: a run of
// 30 cycles of 100 records, each cycle cleared when the next one comes
// (the paper's buffer), left 350 MB of preallocated write-ahead logs for
// the last cycle's 2 MB.
func TestClosedStoreTakesAboutItsRecordsSpace(t *testing.T) {
	dir := t.TempDir()
	store, err := buffersvc.Open(dir, buffersvc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for c := range int64(30) {
		var entries []buffersvc.Entry
		for i := range 100 {
			r, err := swapper.Relabel(swappertest.Explorer("r", c, i, 32))
			if err != nil {
				t.Fatal(err)
			}
			e, err := buffersvc.EntryOf(r, swappertest.Encode(r))
			if err != nil {
				t.Fatal(err)
			}
			entries = append(entries, e)
		}
		if _, err := store.Put(entries); err != nil {
			t.Fatal(err)
		}
		if err := store.ClearThrough("r", c-1); err != nil {
			t.Fatal(err)
		}
	}
	st, err := store.Stats("r")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	if used := diskUsage(t, dir); used > 2*st.Bytes+1<<20 {
		t.Errorf("the closed store takes %d bytes for %d bytes of records, want at most twice as many and 1 MiB", used, st.Bytes)
	}
	reopened, err := buffersvc.Open(dir, buffersvc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	if again, err := reopened.Stats("r"); err != nil || again.Records != 100 {
		t.Errorf("reopened store holds %d records (%v), want the last cycle's 100", again.Records, err)
	}
}
