package buffersvc

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
)

func openTestStore(t testing.TB, opts Options) *Store {
	t.Helper()
	s, err := Open(t.TempDir(), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func entry(cycle int64, id, task string, reward float64, distinct, repeats int32) Entry {
	return Entry{Run: "r", Cycle: cycle, ID: id, TaskID: task, Reward: reward,
		Distinct: distinct, Repeats: repeats, Success: reward >= 1,
		Data: []byte("record " + id)}
}

func mustPut(t testing.TB, s *Store, entries ...Entry) PutResult {
	t.Helper()
	res, err := s.Put(entries)
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
	return res
}

func TestPutStoresAndOverwrites(t *testing.T) {
	s := openTestStore(t, Options{})
	res := mustPut(t, s, entry(1, "a", "t1", 1, 5, 0), entry(1, "b", "t1", 0, 3, 2), entry(1, "a", "t1", 1, 5, 0))
	if want := (PutResult{Stored: 2, Replaced: 1}); res != want {
		t.Errorf("first put: got %+v, want %+v", res, want)
	}
	res = mustPut(t, s, entry(1, "b", "t2", 0.5, 4, 1))
	if want := (PutResult{Replaced: 1}); res != want {
		t.Errorf("redelivery: got %+v, want %+v", res, want)
	}
	ids, err := s.IDs("r", 1)
	if err != nil || !slices.Equal(ids, []string{"a", "b"}) {
		t.Errorf("IDs = %v, %v; want [a b], nil", ids, err)
	}
	st, err := s.Stats("r")
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	want := CycleStats{Cycle: 1, Records: 2, Bytes: int64(2 * len("record a")), Successes: 1,
		SuccessFraction: 0.5, MeanReward: 0.75}
	if len(st.Cycles) != 1 || st.Cycles[0] != want {
		t.Errorf("stats cycles = %+v, want [%+v]", st.Cycles, want)
	}
	// The overwritten record must be indexed under its new priority only.
	got, err := s.Sample("r", SampleRequest{Cycle: 1, Count: 10})
	if err != nil {
		t.Fatalf("Sample: %v", err)
	}
	if ids := entryIDs(got); !slices.Equal(ids, []string{"a", "b"}) {
		t.Errorf("sampled %v, want [a b] (no stale index entry)", ids)
	}
	if got[1].TaskID != "t2" || got[1].Reward != 0.5 {
		t.Errorf("b after overwrite = task %q reward %v, want t2 0.5", got[1].TaskID, got[1].Reward)
	}
}

func TestPutRejectsInvalidEntries(t *testing.T) {
	tests := []struct {
		name string
		e    Entry
	}{
		{"empty id", entry(0, "", "t", 0, 0, 0)},
		{"negative cycle", entry(-1, "a", "t", 0, 0, 0)},
		{"NaN reward", entry(0, "a", "t", math.NaN(), 0, 0)},
		{"infinite reward", entry(0, "a", "t", math.Inf(1), 0, 0)},
		{"negative distinct", entry(0, "a", "t", 0, -1, 0)},
		{"empty run", Entry{ID: "a"}},
		{"NUL in run", Entry{Run: "a\x00b", ID: "a"}},
	}
	s := openTestStore(t, Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Put([]Entry{entry(0, "ok", "t", 0, 0, 0), tt.e})
			if !errors.Is(err, ErrInvalidEntry) {
				t.Errorf("Put error = %v, want ErrInvalidEntry", err)
			}
		})
	}
	if ids, _ := s.IDs("r", 0); len(ids) != 0 {
		t.Errorf("after rejected puts the store holds %v, want nothing", ids)
	}
}

func TestClearThrough(t *testing.T) {
	s := openTestStore(t, Options{})
	for c := int64(0); c < 4; c++ {
		mustPut(t, s, entry(c, fmt.Sprint("c", c), "t", 1, 1, 0))
	}
	other := entry(1, "x", "t", 1, 1, 0)
	other.Run = "r2"
	mustPut(t, s, other)
	if err := s.ClearThrough("r", 1); err != nil {
		t.Fatalf("ClearThrough: %v", err)
	}
	for c, want := range []int{0, 0, 1, 1} {
		if ids, _ := s.IDs("r", int64(c)); len(ids) != want {
			t.Errorf("cycle %d holds %v, want %d records", c, ids, want)
		}
	}
	if ids, _ := s.IDs("r2", 1); len(ids) != 1 {
		t.Errorf("run r2 lost its records: %v", ids)
	}
	if res := mustPut(t, s, entry(1, "late", "t", 1, 1, 0)); res.Dropped != 1 {
		t.Errorf("late record of a cleared cycle: got %+v, want Dropped 1", res)
	}
	if err := s.ClearThrough("r", 0); err != nil {
		t.Fatalf("ClearThrough lower: %v", err)
	}
	if mark, _ := s.ClearedThrough("r"); mark != 1 {
		t.Errorf("watermark after a lower clear = %d, want 1 (never lowered)", mark)
	}
	st, _ := s.Stats("r")
	if st.Records != 2 || len(st.Cycles) != 2 || st.ClearedThrough != 1 {
		t.Errorf("stats = %+v, want 2 records in 2 cycles, cleared through 1", st)
	}
}

// Forget removes one run entirely, watermark included, and leaves runs
// whose names share its prefix alone.
func TestForget(t *testing.T) {
	s := openTestStore(t, Options{})
	mustPut(t, s, entry(3, "a", "t", 1, 1, 0), entry(4, "b", "t", 0, 1, 0))
	if err := s.ClearThrough("r", 3); err != nil {
		t.Fatal(err)
	}
	for _, run := range []string{"r2", "rr"} {
		other := entry(1, "x", "t", 1, 1, 0)
		other.Run = run
		mustPut(t, s, other)
	}
	if err := s.Forget("r"); err != nil {
		t.Fatalf("Forget: %v", err)
	}
	if st, _ := s.Stats("r"); st.Records != 0 || st.ClearedThrough != -1 || len(st.Cycles) != 0 {
		t.Errorf("after Forget: %+v, want nothing of the run", st)
	}
	if res := mustPut(t, s, entry(1, "new", "t", 1, 1, 0)); res.Stored != 1 {
		t.Errorf("a record of cycle 1 after Forget: %+v, want stored (nothing cleared any more)", res)
	}
	for _, run := range []string{"r2", "rr"} {
		if ids, _ := s.IDs(run, 1); len(ids) != 1 {
			t.Errorf("run %s lost its records: %v", run, ids)
		}
	}
}

func TestStorePersistsAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, entry(2, "a", "t", 1, 2, 0))
	if err := s.ClearThrough("r", 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stats("r"); !errors.Is(err, ErrClosed) {
		t.Errorf("Stats after Close error = %v, want ErrClosed", err)
	}
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	data, ok, err := s.Record("r", 2, "a")
	if err != nil || !ok || string(data) != "record a" {
		t.Errorf("Record = %q, %v, %v; want \"record a\", true, nil", data, ok, err)
	}
	if mark, _ := s.ClearedThrough("r"); mark != 0 {
		t.Errorf("watermark = %d, want 0", mark)
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts Options
	}{
		{"negative cap", Options{MaxSamplesPerRecord: -1}},
		{"negative memtable", Options{MemTableBytes: -1}},
		{"huge memtable", Options{MemTableBytes: 4 << 30}},
		{"negative block cache", Options{BlockCacheBytes: -1}},
		{"tiny block cache", Options{BlockCacheBytes: 1<<20 - 1}},
		{"huge block cache", Options{BlockCacheBytes: 64<<30 + 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Open(t.TempDir(), tt.opts); !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("Open error = %v, want ErrInvalidConfig", err)
			}
		})
	}
}

func TestOptionsBlockCacheBounds(t *testing.T) {
	for _, size := range []int64{0, 1 << 20, 64 << 30} {
		if err := (Options{BlockCacheBytes: size}).Validate(); err != nil {
			t.Errorf("BlockCacheBytes %d: %v, want valid", size, err)
		}
	}
	s := openTestStore(t, Options{BlockCacheBytes: 1 << 20})
	mustPut(t, s, entry(0, "a", "t", 1, 1, 0))
	if data, ok, err := s.Record("r", 0, "a"); err != nil || !ok || string(data) != "record a" {
		t.Errorf("Record with a 1 MiB cache = %q, %v, %v", data, ok, err)
	}
}

func entryIDs(es []Entry) []string {
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.ID
	}
	return ids
}

func TestCompactKeepsRecords(t *testing.T) {
	s := openTestStore(t, Options{})
	mustPut(t, s, entry(0, "a", "t", 1, 1, 0), entry(1, "b", "t", 0, 1, 0))
	if err := s.ClearThrough("r", 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(); err != nil {
		t.Fatalf("Compact: %v", err)
	}
	if data, ok, err := s.Record("r", 1, "b"); err != nil || !ok || string(data) != "record b" {
		t.Errorf("after Compact: Record = %q, %v, %v; want \"record b\", true, nil", data, ok, err)
	}
	if ids, _ := s.IDs("r", 0); len(ids) != 0 {
		t.Errorf("cleared cycle 0 holds %v after Compact, want nothing", ids)
	}
	s.Close()
	if err := s.Compact(); !errors.Is(err, ErrClosed) {
		t.Errorf("Compact after Close = %v, want ErrClosed", err)
	}
}
