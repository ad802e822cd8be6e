package schemas

import (
	"strings"
	"testing"
)

func TestTrajectoryID(t *testing.T) {
	tests := []struct {
		name     string
		run      string
		source   Source
		producer string
		seq      uint64
		want     string
	}{
		{"plain", "exp1", SourceOnPolicy, "actor-0", 42, "exp1.onpolicy.actor-0.42"},
		{"explore, seq 0", "r", SourceExplore, "explorer_2", 0, "r.explore.explorer_2.0"},
		{"max seq", "r", SourceExplore, "e", 18446744073709551615, "r.explore.e.18446744073709551615"},
		// The hashed forms are pinned (checked with sha256sum): ids must not
		// change between releases.
		{"producer with space", "r", SourceOnPolicy, "actor 1", 1, "r.onpolicy.actor_1~" + "a292bdfa58c7.1"},
		{"producer with dot", "r", SourceOnPolicy, "host.example:7", 1, "r.onpolicy.host_example_7~" + "bb6942fba3d2.1"},
		{"empty producer", "r", SourceOnPolicy, "", 1, "r.onpolicy.~e3b0c44298fc.1"},
		{"newline in run", "a\nb", SourceOnPolicy, "p", 1, "a_b~" + "7e18f737311b.onpolicy.p.1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := TrajectoryID(tc.run, tc.source, tc.producer, tc.seq); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTrajectoryIDIsSafeAndDistinct(t *testing.T) {
	producers := []string{"a b", "a_b", "a.b", "a\nb", "a\r\nb", strings.Repeat("p", 64), strings.Repeat("p", 65),
		strings.Repeat("p", 200), "ünï", "", "~", "a~b"}
	seen := map[string]string{}
	for _, p := range producers {
		id := TrajectoryID("run", SourceExplore, p, 3)
		if err := checkMsgID("id", id); err != nil {
			t.Errorf("producer %q: id %q is not a safe Nats-Msg-Id: %v", p, id, err)
		}
		if len(id) > 3*maxIDPart {
			t.Errorf("producer %q: id of %d bytes, want at most %d", p, len(id), 3*maxIDPart)
		}
		if parts := strings.Split(id, "."); len(parts) != 4 {
			t.Errorf("producer %q: id %q has %d dot-separated parts, want 4", p, id, len(parts))
		}
		if other, dup := seen[id]; dup {
			t.Errorf("producers %q and %q share the id %q", p, other, id)
		}
		seen[id] = p
	}
}
