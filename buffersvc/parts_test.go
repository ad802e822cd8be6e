package buffersvc

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/nats-io/nats.go"
)

func TestSplitAndReassemble(t *testing.T) {
	tests := []struct {
		name      string
		size, cut int
		wantParts int
	}{
		{"empty", 0, 10, 1},
		{"fits", 10, 10, 1},
		{"one byte over", 11, 10, 2},
		{"many", 1000, 7, 143},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := make([]byte, tt.size)
			for i := range data {
				data[i] = byte(i)
			}
			msgs := splitReply(data, tt.cut, 3)
			if len(msgs) != tt.wantParts {
				t.Fatalf("got %d parts, want %d", len(msgs), tt.wantParts)
			}
			rng := rand.New(rand.NewPCG(1, 1))
			rng.Shuffle(len(msgs), func(i, j int) { msgs[i], msgs[j] = msgs[j], msgs[i] })
			var a assembler
			for k, m := range msgs {
				if len(m.Data) > tt.cut {
					t.Errorf("part of %d bytes, want at most %d", len(m.Data), tt.cut)
				}
				done, err := a.add(m)
				if err != nil {
					t.Fatalf("add: %v", err)
				}
				if done != (k == len(msgs)-1) {
					t.Fatalf("done = %v after %d of %d parts", done, k+1, len(msgs))
				}
			}
			if got := a.bytes(); !bytes.Equal(got, data) {
				t.Errorf("reassembled %d bytes, want the %d sent", len(got), len(data))
			}
			if a.records != 3 {
				t.Errorf("records = %d, want 3", a.records)
			}
		})
	}
}

func TestAssemblerRejectsInconsistentParts(t *testing.T) {
	part := func(p, records string) *nats.Msg {
		h := nats.Header{}
		h.Set(HeaderPart, p)
		h.Set(HeaderRecords, records)
		return &nats.Msg{Header: h, Data: []byte("x")}
	}
	tests := []struct {
		name  string
		parts []*nats.Msg
	}{
		{"no header", []*nats.Msg{{Header: nats.Header{}}}},
		{"zero index", []*nats.Msg{part("0/2", "1")}},
		{"index above count", []*nats.Msg{part("3/2", "1")}},
		{"garbage", []*nats.Msg{part("a/b", "1")}},
		{"bad records", []*nats.Msg{part("1/2", "-4")}},
		{"count changes", []*nats.Msg{part("1/2", "1"), part("2/3", "1")}},
		{"records change", []*nats.Msg{part("1/2", "1"), part("2/2", "2")}},
		{"duplicate", []*nats.Msg{part("1/2", "1"), part("1/2", "1")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a assembler
			var err error
			for _, p := range tt.parts {
				if _, err = a.add(p); err != nil {
					break
				}
			}
			if !errors.Is(err, ErrBadReply) {
				t.Errorf("error = %v, want ErrBadReply", err)
			}
		})
	}
}

func TestPartSize(t *testing.T) {
	for _, tt := range []struct{ max, want int64 }{{1 << 20, 1<<20 - headerReserve}, {1500, 750}, {1, 1}} {
		if got := partSize(tt.max); int64(got) != tt.want {
			t.Errorf("partSize(%d) = %d, want %d", tt.max, got, tt.want)
		}
	}
}

func FuzzParsePart(f *testing.F) {
	for _, s := range []string{"1/1", "3/7", "0/1", "2/1", "a/b", "", "/", "1/99999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		i, n, err := parsePart(s)
		if err != nil {
			if !errors.Is(err, ErrBadReply) {
				t.Fatalf("parsePart(%q) error %v does not wrap ErrBadReply", s, err)
			}
			return
		}
		if i < 1 || i > n || n > maxReplyParts {
			t.Fatalf("parsePart(%q) = %d/%d, outside 1 ≤ i ≤ n ≤ %d", s, i, n, maxReplyParts)
		}
	})
}

// FuzzAssemble feeds a reply's parts to the client's assembler: the parts
// of a split reply, in any order, reassemble to the reply; hostile part
// headers are refused with ErrBadReply without allocating for parts that
// were only claimed.
func FuzzAssemble(f *testing.F) {
	f.Add([]byte("a reply of several parts"), uint8(5), uint8(3), "", "")
	f.Add([]byte{}, uint8(1), uint8(0), "1/4096", "7")
	f.Add([]byte("x"), uint8(2), uint8(1), "1/99999999", "1")
	f.Fuzz(func(t *testing.T, data []byte, size, rotate uint8, hostilePart, hostileRecords string) {
		parts := splitReply(data, int(max(size, 1)), 3)
		if len(parts) > maxReplyParts {
			return
		}
		var a assembler
		if hostilePart != "" {
			h := nats.Header{}
			h.Set(HeaderPart, hostilePart)
			h.Set(HeaderRecords, hostileRecords)
			if _, err := a.add(&nats.Msg{Header: h, Data: data}); err != nil {
				if !errors.Is(err, ErrBadReply) {
					t.Fatalf("hostile part: error %v does not wrap ErrBadReply", err)
				}
				return
			}
			if len(a.parts) > maxReplyParts {
				t.Fatalf("assembler holds %d part slots, more than %d", len(a.parts), maxReplyParts)
			}
			return
		}
		for k := range parts {
			m := parts[(k+int(rotate))%len(parts)]
			done, err := a.add(m)
			if err != nil {
				t.Fatalf("part %d: %v", k, err)
			}
			if done != (k == len(parts)-1) {
				t.Fatalf("part %d of %d: done %v", k+1, len(parts), done)
			}
		}
		if !bytes.Equal(a.bytes(), data) || a.records != 3 {
			t.Fatalf("reassembled %q (%d records), want %q (3)", a.bytes(), a.records, data)
		}
	})
}
