package streams

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/schemas"
)

// FuzzMessageDecode feeds arbitrary payloads on every kind of subject to
// the decoder behind DecodeMessage and Replay. Seeds: valid payloads of
// each kind in testdata/fuzz/FuzzMessageDecode (regenerate with
// `go test -run TestFuzzCorpus -update`) and the cases below.
func FuzzMessageDecode(f *testing.F) {
	for _, s := range []string{"rspo.r.traj.explore", "rspo.r.swapped", "rspo.r.ctrl.run.started",
		"rspo.r.metrics.learner", "rspo.r.work.rollout", "rspo.r.work.explore", "rspo.r.work.eval", "rspo.r.eval.3", "rspo.r.dlq.swapper", "other"} {
		f.Add(s, []byte("{}"))
		f.Add(s, []byte(""))
	}
	f.Add("rspo.r.ctrl.cycle.started", []byte(`{"type":"cycle.started","run":"r","cycle":1}`))
	f.Fuzz(func(t *testing.T, subject string, raw []byte) {
		m := Message{Subject: subject, Raw: raw}
		m.decode()
		typed := 0
		for _, set := range []bool{m.Trajectory != nil, m.Event != nil, m.Metrics != nil, m.Rollout != nil, m.Shard != nil, m.EvalShard != nil, m.EvalResult != nil} {
			if set {
				typed++
			}
		}
		if typed > 1 || (typed == 1 && m.Err != nil) {
			t.Fatalf("got %d typed records and error %v; want one record or an error", typed, m.Err)
		}
		b, err := json.Marshal(m)
		if err != nil || !json.Valid(b) {
			t.Fatalf("MarshalJSON: %v (%q)", err, b)
		}
		if m.Trajectory != nil {
			again, err := schemas.EncodeTrajectory(m.Trajectory)
			if err != nil {
				t.Fatalf("re-encode decoded trajectory: %v", err)
			}
			back, err := schemas.DecodeTrajectory(again)
			if err != nil || !reflect.DeepEqual(back, m.Trajectory) {
				t.Fatalf("round trip: %v\ngot  %+v\nwant %+v", err, back, m.Trajectory)
			}
		}
	})
}

// FuzzReplaySubject checks that every subject Replay accepts maps to a
// literal filter of the run inside one stream, and that every other one is
// refused with ErrUnknownSubject.
func kindStrings(kinds []SubjectKind) []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = string(k)
	}
	return out
}

func FuzzReplaySubject(f *testing.F) {
	for _, s := range append(kindStrings(ReplaySubjects), "ctrl.cycle.started", "metrics.learner", "dlq.x", "traj.x",
		"ctrl.*", "metrics.>", "swapped.x", "a..b", "ctrl.", ".ctrl", "work.rollout", "eval.12", "eval.*", "") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		stream, filter, err := ReplayOptions{Run: "r1", Subject: SubjectKind(rel)}.filter()
		if err != nil {
			if !errors.Is(err, ErrUnknownSubject) {
				t.Fatalf("got %v, want ErrUnknownSubject", err)
			}
			return
		}
		if stream == "" || stream == StreamWork {
			t.Fatalf("%q: got stream %q, want a history stream", rel, stream)
		}
		literal, ok := strings.CutPrefix(strings.TrimSuffix(filter, ".>"), "rspo.r1.")
		if !ok {
			t.Fatalf("%q: got filter %q, want rspo.r1.<tokens>[.>]", rel, filter)
		}
		for _, tok := range strings.Split(literal, ".") {
			if validateToken("subject", tok) != nil {
				t.Fatalf("%q: got filter %q with token %q, want only plain tokens", rel, filter, tok)
			}
		}
	})
}
