package buffersvc

import (
	"errors"
	"fmt"
	"testing"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/swapper"
	"github.com/rspo-dev/rspo/swapper/swappertest"
)

func swappedRecord(t testing.TB, i, steps int) *schemas.Trajectory {
	t.Helper()
	r, err := swapper.Relabel(swappertest.Explorer("r", 1, i, steps))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestEntryOf(t *testing.T) {
	r := swappedRecord(t, 3, 8)
	data := swappertest.Encode(r)
	e, err := EntryOf(r, data)
	if err != nil {
		t.Fatal(err)
	}
	want := Entry{Run: "r", Cycle: 1, ID: r.ID, TaskID: r.TaskID, Reward: r.OutcomeReward,
		Distinct: r.DistinctStates, Repeats: r.RepeatedVisits, Success: r.Success}
	got := e
	got.Data = nil
	if fmt.Sprint(got) != fmt.Sprint(want) || len(e.Data) != len(data) {
		t.Errorf("got %+v, want %+v with the %d data bytes", got, want, len(data))
	}
}

func TestEntryOfRejectsNonRecords(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*schemas.Trajectory)
	}{
		{"not swapped", func(t *schemas.Trajectory) { t.Swapped = false }},
		{"dense label left", func(t *schemas.Trajectory) { t.Steps[1].Reward = 0.5 }},
		{"last step without outcome", func(t *schemas.Trajectory) { t.Steps[len(t.Steps)-1].Reward = 1 - t.OutcomeReward }},
		{"inflated distinct", func(t *schemas.Trajectory) { t.DistinctStates++; t.RepeatedVisits-- }},
		{"hidden repeats", func(t *schemas.Trajectory) { t.RepeatedVisits = 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := swappedRecord(t, 5, 8)
			tt.mutate(r)
			if _, err := EntryOf(r, nil); !errors.Is(err, ErrNotRecord) {
				t.Errorf("EntryOf error = %v, want ErrNotRecord", err)
			}
		})
	}
}

// FuzzDecodeRecord fuzzes what the service does with a swapped message:
// decode, check it is a record, build its entry. Whatever is accepted must
// be storable.
func FuzzDecodeRecord(f *testing.F) {
	f.Add(swappertest.Encode(swappedRecord(f, 1, 2)))
	f.Add(swappertest.Encode(swappertest.Explorer("r", 0, 2, 2)))
	f.Add([]byte("not arrow"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := schemas.DecodeTrajectory(data)
		if err != nil {
			return
		}
		e, err := EntryOf(tr, data)
		if err != nil {
			if !errors.Is(err, ErrNotRecord) {
				t.Fatalf("EntryOf error %v does not wrap ErrNotRecord", err)
			}
			return
		}
		if err := e.Validate(); err != nil {
			t.Fatalf("accepted record does not validate as an entry: %v", err)
		}
	})
}
