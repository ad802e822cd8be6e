package learnersvc

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

// FuzzDecodeCheckpoint decodes arbitrary checkpoint values from the state
// bucket: an accepted checkpoint is one a learner could have written, and
// survives a round trip.
func FuzzDecodeCheckpoint(f *testing.F) {
	good, _ := json.Marshal(Checkpoint{Update: 6, Version: 6, PRMVersion: 2, TrajSeq: 99, EnvStepsActor: 5000, ExploredCycles: 2, ShortCycles: []int64{0, 1}})
	for _, seed := range [][]byte{good, []byte(`{"short_cycles":[3,3]}`), []byte(`{"short_cycles":[-1]}`), []byte(`{"short_cycles":[]}`), []byte(`{}`), []byte(`{"update":-1}`), []byte(`{"update":1,"version":9}`), []byte(`nul`)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cp, err := DecodeCheckpoint(b)
		if err != nil {
			return
		}
		if cp.Update < 0 || cp.Version < 0 || cp.Version > cp.Update || cp.EnvStepsActor < 0 || cp.EnvStepsExplorer < 0 {
			t.Fatalf("accepted an impossible checkpoint %+v", cp)
		}
		for i, c := range cp.ShortCycles {
			if c < 0 || slices.Contains(cp.ShortCycles[:i], c) {
				t.Fatalf("accepted impossible short cycles %v", cp.ShortCycles)
			}
		}
		raw, _ := json.Marshal(cp)
		again, err := DecodeCheckpoint(raw)
		if err != nil || !slices.Equal(again.ShortCycles, cp.ShortCycles) {
			t.Fatalf("round trip: %+v, %v; want %+v", again, err, cp)
		}
		again.ShortCycles, cp.ShortCycles = nil, nil
		if !reflect.DeepEqual(again, cp) {
			t.Fatalf("round trip: %+v; want %+v", again, cp)
		}
	})
}
