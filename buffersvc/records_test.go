package buffersvc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/rspo-dev/rspo/swapper"
	"github.com/rspo-dev/rspo/swapper/swappertest"
)

func storedEntries(t testing.TB, n int) []Entry {
	t.Helper()
	out := make([]Entry, n)
	for i := range out {
		r, err := swapper.Relabel(swappertest.Explorer("r", 1, i, 4))
		if err != nil {
			t.Fatal(err)
		}
		if out[i], err = EntryOf(r, swappertest.Encode(r)); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// joinRecords writes the length-prefixed records into one buffer: the
// reply body Store.sampleReply writes, from the entries Sample returns.
func joinRecords(entries []Entry) ([]byte, error) {
	size := 0
	for _, e := range entries {
		size += 4 + len(e.Data)
	}
	if size > maxReplyBytes {
		return nil, fmt.Errorf("%w: %d records of %d bytes exceed a reply's %d bytes (ask for fewer)",
			ErrBadRequest, len(entries), size, maxReplyBytes)
	}
	out := make([]byte, 0, size)
	for _, e := range entries {
		out = binary.BigEndian.AppendUint32(out, uint32(len(e.Data)))
		out = append(out, e.Data...)
	}
	return out, nil
}

// The reply body the store writes is the records Sample returns, joined.
func TestSampleReplyIsTheJoinedSample(t *testing.T) {
	s := openTestStore(t, Options{})
	mustPut(t, s, storedEntries(t, 40)...)
	for _, req := range []SampleRequest{
		{Cycle: 1, Count: 16, Seed: 3},
		{Cycle: 1, Count: 16, Seed: 4, PreferTasks: []string{storedEntries(t, 3)[2].TaskID}},
		{Cycle: 1, Count: 100, Seed: 5},
		{Cycle: 2, Count: 4, Seed: 6},
	} {
		entries, err := s.Sample("r", req)
		if err != nil {
			t.Fatal(err)
		}
		want, err := joinRecords(entries)
		if err != nil {
			t.Fatal(err)
		}
		got, n, err := s.sampleReply("r", req)
		if err != nil {
			t.Fatal(err)
		}
		if n != len(entries) || !bytes.Equal(got, want) {
			t.Errorf("%+v: sampleReply gave %d records (%d bytes), Sample %d (%d bytes joined)", req, n, len(got), len(entries), len(want))
		}
	}
	st, err := s.Stats("r")
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(2 * (16 + 16 + 40)); st.SamplesServed != want {
		t.Errorf("samples served %d, want %d (both paths count)", st.SamplesServed, want)
	}
}

// The records the buffer joins are the ones the client decodes, in order.
func TestJoinedRecordsDecodeToTheStoredTrajectories(t *testing.T) {
	entries := storedEntries(t, 5)
	data, err := joinRecords(entries)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeRecords(data, len(entries))
	if err != nil {
		t.Fatal(err)
	}
	for i, tr := range got {
		if tr.ID != entries[i].ID {
			t.Errorf("record %d: got %s, want %s", i, tr.ID, entries[i].ID)
		}
	}
	for _, tt := range []struct {
		name string
		data []byte
		want int
	}{
		{"fewer than announced", data, 6},
		{"more than announced", data, 4},
		{"cut short", data[:len(data)-3], 5},
		{"length beyond the body", binary.BigEndian.AppendUint32(nil, 1<<30), 1},
	} {
		if _, err := DecodeRecords(tt.data, tt.want); !errors.Is(err, ErrBadReply) {
			t.Errorf("%s: got %v, want ErrBadReply", tt.name, err)
		}
	}
}

// FuzzDecodeRecords decodes arbitrary "records/1" bodies: every failure is
// ErrBadReply, and an accepted body holds exactly the records announced.
func FuzzDecodeRecords(f *testing.F) {
	data, err := joinRecords(storedEntries(f, 2))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data, 2)
	f.Add(data[:10], 1)
	f.Add([]byte{0, 0, 0, 0}, 1)
	f.Fuzz(func(t *testing.T, b []byte, want int) {
		ts, err := DecodeRecords(b, want)
		if err != nil {
			if !errors.Is(err, ErrBadReply) {
				t.Fatalf("error %v does not wrap ErrBadReply", err)
			}
			return
		}
		if len(ts) != want {
			panic(fmt.Sprintf("accepted %d records, %d announced", len(ts), want))
		}
	})
}

// BenchmarkDecodeRecords decodes a sample reply of 16 swapped 32-step
// records, as Client.Sample does after the reply arrived.
func BenchmarkDecodeRecords(b *testing.B) {
	entries := make([]Entry, 16)
	for i := range entries {
		r, err := swapper.Relabel(swappertest.Explorer("r", 1, i, 32))
		if err != nil {
			b.Fatal(err)
		}
		if entries[i], err = EntryOf(r, swappertest.Encode(r)); err != nil {
			b.Fatal(err)
		}
	}
	data, err := joinRecords(entries)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeRecords(data, len(entries)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/reply")
}
