package buffersvc

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// goldenBuffer is the fixed buffer of the sampling-order golden test: ties on
// every key, two tasks, a failure with many states, and a second cycle.
func goldenBuffer() []Entry {
	return []Entry{
		entry(3, "f-many-states", "t1", 0, 30, 0),
		entry(3, "s-5-0-a", "t1", 1, 5, 0),
		entry(3, "s-5-0-b", "t2", 1, 5, 0),
		entry(3, "s-5-0-c", "t3", 1, 5, 0),
		entry(3, "s-5-0-d", "t2", 1, 5, 0),
		entry(3, "s-5-2", "t1", 1, 5, 2),
		entry(3, "s-9-4", "t3", 1, 9, 4),
		entry(3, "s-3-0", "t2", 1, 3, 0),
		entry(3, "p-0.5-7-1", "t1", 0.5, 7, 1),
		entry(3, "p-0.5-7-1-b", "t3", 0.5, 7, 1),
		entry(3, "p-0.25-20-0", "t2", 0.25, 20, 0),
		entry(3, "f-4-4-a", "t1", 0, 4, 4),
		entry(3, "f-4-4-b", "t2", 0, 4, 4),
		entry(3, "f-4-4-c", "t3", 0, 4, 4),
		entry(3, "f-4-4-d", "t1", 0, 4, 4),
		entry(3, "f-2-8", "t3", 0, 2, 8),
		entry(4, "next-cycle", "t1", 1, 50, 0),
	}
}

func TestSampleOrderGolden(t *testing.T) {
	requests := []struct {
		name string
		req  SampleRequest
	}{
		{"top 4, seed 1", SampleRequest{Cycle: 3, Count: 4, Seed: 1}},
		{"top 4, seed 2", SampleRequest{Cycle: 3, Count: 4, Seed: 2}},
		{"all, seed 7", SampleRequest{Cycle: 3, Count: 100, Seed: 7}},
		{"prefer t3, 6 records", SampleRequest{Cycle: 3, Count: 6, Seed: 1, PreferTasks: []string{"t3"}}},
		{"prefer t2 and t3, 12 records", SampleRequest{Cycle: 3, Count: 12, Seed: 3, PreferTasks: []string{"t3", "t2", "t3"}}},
		{"prefer unknown task", SampleRequest{Cycle: 3, Count: 3, Seed: 1, PreferTasks: []string{"nope"}}},
		{"cycle 4", SampleRequest{Cycle: 4, Count: 5, Seed: 1}},
		{"empty cycle", SampleRequest{Cycle: 9, Count: 5, Seed: 1}},
	}
	s := openTestStore(t, Options{})
	mustPut(t, s, goldenBuffer()...)
	var out strings.Builder
	for _, r := range requests {
		got, err := s.Sample("r", r.req)
		if err != nil {
			t.Fatalf("%s: Sample: %v", r.name, err)
		}
		fmt.Fprintf(&out, "== %s: %+v\n", r.name, r.req)
		for i, e := range got {
			fmt.Fprintf(&out, "%2d %-12s task=%s reward=%g distinct=%d repeats=%d\n",
				i, e.ID, e.TaskID, e.Reward, e.Distinct, e.Repeats)
		}
	}
	checkGolden(t, "sample_order.golden", []byte(out.String()))
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update to create): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update if the change is intended)\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

func TestSampleIsDeterministicAndOrdered(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := openTestStore(t, Options{})
	var entries []Entry
	for i := range 300 {
		entries = append(entries, entry(0, fmt.Sprintf("e%03d", i), fmt.Sprint("t", rng.IntN(7)),
			float64(rng.IntN(3))/2, int32(rng.IntN(6)), int32(rng.IntN(4))))
	}
	mustPut(t, s, entries...)
	req := SampleRequest{Cycle: 0, Count: 40, Seed: 11, PreferTasks: []string{"t2"}}
	a, err := s.Sample("r", req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := s.Sample("r", req)
	if fmt.Sprint(entryIDs(a)) != fmt.Sprint(entryIDs(b)) {
		t.Errorf("same request twice: got %v then %v", entryIDs(a), entryIDs(b))
	}
	if len(a) != req.Count {
		t.Fatalf("got %d records, want %d", len(a), req.Count)
	}
	preferredDone := false
	for i := 1; i < len(a); i++ {
		prev, cur := a[i-1], a[i]
		if prev.TaskID == "t2" && cur.TaskID != "t2" {
			preferredDone = true
			continue
		}
		if cur.TaskID == "t2" && preferredDone {
			t.Fatalf("record %d of preferred task t2 after non-preferred records", i)
		}
		pp, cp := priorityOf(prev.Reward, prev.Distinct, prev.Repeats), priorityOf(cur.Reward, cur.Distinct, cur.Repeats)
		if bytes.Compare(pp[:], cp[:]) > 0 {
			t.Errorf("record %d (%+v) ranks above record %d (%+v)", i, cur, i-1, prev)
		}
	}
}

func TestSampleTiesAreRandomPerSeed(t *testing.T) {
	s := openTestStore(t, Options{})
	for i := range 10 {
		mustPut(t, s, entry(0, fmt.Sprint("tie", i), "t", 1, 4, 0))
	}
	first := map[string]bool{}
	for seed := range int64(20) {
		got, err := s.Sample("r", SampleRequest{Cycle: 0, Count: 1, Seed: seed})
		if err != nil || len(got) != 1 {
			t.Fatalf("Sample: %v, %d records", err, len(got))
		}
		first[got[0].ID] = true
	}
	if len(first) < 3 {
		t.Errorf("20 seeds picked only %v among 10 tied records, want a spread", first)
	}
}

func TestSampleCap(t *testing.T) {
	s := openTestStore(t, Options{MaxSamplesPerRecord: 2})
	for i := range 5 {
		mustPut(t, s, entry(0, fmt.Sprint("e", i), "t", float64(5-i), 1, 0))
	}
	var seen []string
	for range 3 {
		got, err := s.Sample("r", SampleRequest{Cycle: 0, Count: 2})
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, strings.Join(entryIDs(got), ","))
	}
	want := []string{"e0,e1", "e0,e1", "e2,e3"}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("with cap 2: got %v, want %v", seen, want)
	}
	// A redelivery of an exhausted record must not bring it back.
	mustPut(t, s, entry(0, "e0", "t", 5, 1, 0))
	got, _ := s.Sample("r", SampleRequest{Cycle: 0, Count: 5})
	if ids := strings.Join(entryIDs(got), ","); ids != "e2,e3,e4" {
		t.Errorf("after redelivery of e0: got %s, want e2,e3,e4", ids)
	}
	st, _ := s.Stats("r")
	if st.SamplesServed != 9 || st.Records != 5 {
		t.Errorf("stats: served %d records %d, want 9 and 5", st.SamplesServed, st.Records)
	}
}

func TestSampleRejectsBadRequests(t *testing.T) {
	tests := []struct {
		name string
		req  SampleRequest
	}{
		{"zero count", SampleRequest{Count: 0}},
		{"huge count", SampleRequest{Count: MaxSampleCount + 1}},
		{"negative cycle", SampleRequest{Cycle: -1, Count: 1}},
		{"long task id", SampleRequest{Count: 1, PreferTasks: []string{strings.Repeat("x", maxTaskIDLen+1)}}},
	}
	s := openTestStore(t, Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.Sample("r", tt.req); !errors.Is(err, ErrBadRequest) {
				t.Errorf("error = %v, want ErrBadRequest", err)
			}
		})
	}
}
