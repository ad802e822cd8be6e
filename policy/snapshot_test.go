package policy

import (
	"encoding/binary"
	"errors"
	"flag"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files and the fuzz seed corpus under testdata/")

// trainedPolicy returns a small policy with a few rows moved by Adam, as
// after training.
func trainedPolicy(t testing.TB) *Policy {
	t.Helper()
	p := newTestPolicy(t, Config{Buckets: 256, EmbedDim: 3, Hidden: 4, History: 2, Seed: 9})
	f, err := p.NewFeaturizer().Features(testState())
	if err != nil {
		t.Fatal(err)
	}
	opt, err := NewAdam(p, AdamConfig{LR: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	g := p.NewGrads()
	for range 3 {
		var ps Pass
		p.Forward(f, &ps)
		d := make([]float64, len(ps.LogProbs))
		AddLogProbGrad(d, ps.LogProbs, 2, -1)
		g.Zero()
		if err := p.Backward(&ps, d, ps.Value-1, g); err != nil {
			t.Fatal(err)
		}
		if err := opt.Step(p, g); err != nil {
			t.Fatal(err)
		}
	}
	p.SetVersion(42)
	return p
}

func TestSnapshotRoundTrip(t *testing.T) {
	p := trainedPolicy(t)
	b, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	q, err := Load(b)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if q.Version() != 42 || q.Config() != p.Config() {
		t.Fatalf("got version %d config %+v, want 42 %+v", q.Version(), q.Config(), p.Config())
	}
	for i := range p.params {
		if p.params[i] != q.params[i] {
			t.Fatalf("param %d: got %v, want %v", i, q.params[i], p.params[i])
		}
	}
	b2, _ := q.MarshalBinary()
	if string(b) != string(b2) {
		t.Fatal("re-encoding a loaded snapshot changed its bytes")
	}
	t.Logf("snapshot of %d touched rows: %d bytes", len(p.touched.list), len(b))
}

func TestSnapshotIsSparse(t *testing.T) {
	p := newTestPolicy(t, Config{})
	b, _ := p.MarshalBinary()
	dense := 4 * (p.lay.total - p.lay.sparse)
	if len(b) > dense+200 {
		t.Fatalf("fresh policy snapshot is %d bytes, want about the dense part (%d)", len(b), dense)
	}
}

// reseal recomputes the checksum of an edited snapshot.
func reseal(b []byte) []byte {
	body := b[:len(b)-4]
	return binary.LittleEndian.AppendUint32(append([]byte(nil), body...), crc32.Checksum(body, castagnoli))
}

func TestSnapshotErrors(t *testing.T) {
	good, _ := trainedPolicy(t).MarshalBinary()
	edit := func(fn func(b []byte) []byte) []byte { return fn(append([]byte(nil), good...)) }
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{name: "empty", in: nil, want: ErrSnapshot},
		{name: "foreign file", in: []byte("PK\x03\x04 this is a zip file, not a policy"), want: ErrSnapshot},
		{name: "truncated", in: good[:len(good)/2], want: ErrSnapshotChecksum},
		{name: "header only", in: good[:20], want: ErrSnapshot},
		{name: "flipped bit", in: edit(func(b []byte) []byte { b[len(b)/2] ^= 1; return b }), want: ErrSnapshotChecksum},
		{name: "other format", in: edit(func(b []byte) []byte { b[8] = 9; return reseal(b) }), want: ErrSnapshotVersion},
		{name: "other features", in: edit(func(b []byte) []byte { b[10] = 9; return reseal(b) }), want: ErrSnapshotVersion},
		{name: "bad config", in: edit(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[12:], 3); return reseal(b) }), want: ErrConfig},
		{name: "NaN parameter", in: edit(func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[len(b)-8:], 0x7fc00000)
			return reseal(b)
		}), want: ErrSnapshot},
		{name: "trailing bytes", in: reseal(append(append([]byte(nil), good[:len(good)-4]...), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), want: ErrSnapshot},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.in)
			if !errors.Is(err, tt.want) || !errors.Is(err, ErrSnapshot) {
				t.Fatalf("got %v, want %v (and ErrSnapshot)", err, tt.want)
			}
		})
	}
}

// TestFuzzCorpus keeps the fuzz seed corpora in step with the formats.
func TestFuzzCorpus(t *testing.T) {
	p := trainedPolicy(t)
	snap, _ := p.MarshalBinary()
	small := newTestPolicy(t, Config{Buckets: 256, EmbedDim: 2, Hidden: 2})
	o, _ := NewAdam(small, AdamConfig{})
	trainSteps(t, small, o, 2)
	adam, _ := o.MarshalBinary()
	checkCorpus(t, "FuzzLoad", snap)
	checkCorpus(t, "FuzzLoadAdam", adam)
}

func checkCorpus(t *testing.T, fuzz string, good []byte) {
	t.Helper()
	path := filepath.Join("testdata", "fuzz", fuzz, "seed")
	want := "go test fuzz v1\n[]byte(" + quoteBytes(good) + ")\n"
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != want {
		t.Fatalf("seed corpus %s is stale or missing (%v); run go test ./policy -run TestFuzzCorpus -update", path, err)
	}
}

func quoteBytes(b []byte) string {
	const hex = "0123456789abcdef"
	out := []byte{'"'}
	for _, c := range b {
		out = append(out, '\\', 'x', hex[c>>4], hex[c&15])
	}
	return string(append(out, '"'))
}

// FuzzLoad checks that Load never panics and that whatever it accepts
// re-encodes to the same bytes.
func FuzzLoad(f *testing.F) {
	good, _ := trainedPolicy(f).MarshalBinary()
	f.Add(good)
	f.Add(good[:30])
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Load(b)
		if err != nil {
			if !errors.Is(err, ErrSnapshot) {
				t.Fatalf("error %v does not match ErrSnapshot", err)
			}
			return
		}
		out, err := p.MarshalBinary()
		if err != nil || string(out) != string(b) {
			t.Fatalf("accepted snapshot does not round-trip (%v)", err)
		}
	})
}
