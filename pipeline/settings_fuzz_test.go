package pipeline

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeSettings decodes arbitrary recorded settings: accepted ones
// compare equal to themselves and to their own round trip, so a resumed
// run is never refused (or let through) by an artefact of the encoding.
func FuzzDecodeSettings(f *testing.F) {
	good, _ := json.Marshal(DefaultOptions().Settings())
	for _, seed := range [][]byte{good, []byte(`{}`), []byte(`null`), []byte(`{"k":[1,{"a":null}]}`), []byte(`{"k":1e999}`)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeSettings(b)
		if err != nil {
			return
		}
		if d := settingsDiff(m, m); len(d) != 0 {
			t.Fatalf("settings differ from themselves: %v", d)
		}
		raw, _ := json.Marshal(m)
		again, err := decodeSettings(raw)
		if err != nil {
			t.Fatalf("round trip refused: %v", err)
		}
		if d := settingsDiff(m, again); len(d) != 0 {
			t.Fatalf("round trip changed %v", d)
		}
	})
}
