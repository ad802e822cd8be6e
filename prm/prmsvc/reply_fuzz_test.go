package prmsvc

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzDecodeScoreReply decodes arbitrary score replies: an accepted reply
// has a total per score list, and survives a round trip.
func FuzzDecodeScoreReply(f *testing.F) {
	good, _ := json.Marshal(ScoreReply{PRMVersion: 2, Scores: [][]float64{{0.1, 0.2}, {}}, Totals: []float64{0.30000000000000004, 0}})
	for _, seed := range [][]byte{good, []byte(`{}`), []byte(`{"scores":[[1]],"totals":[]}`), []byte(`{"scores":[[1]],"totals":[5]}`), []byte(`{`)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeScoreReply(b)
		if err != nil {
			if !errors.Is(err, ErrServer) {
				t.Fatalf("error %v does not wrap ErrServer", err)
			}
			return
		}
		if len(r.Scores) != len(r.Totals) {
			t.Fatalf("accepted %d score lists with %d totals", len(r.Scores), len(r.Totals))
		}
		raw, _ := json.Marshal(r)
		if _, err := DecodeScoreReply(raw); err != nil {
			t.Fatalf("round trip refused: %v", err)
		}
	})
}
