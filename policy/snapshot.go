package policy

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
)

// Snapshot format (little endian):
//
//	magic        8 bytes  "RSPOPOL\x00"
//	format       uint16   snapshotFormat
//	features     uint16   featureVersion (the meaning of the hashed features)
//	config       Buckets, EmbedDim, Hidden, History, NumFlags as uint32;
//	             Temperature float64; Seed int64; InitScale float64
//	version      int64    policy version
//	rows         uint32 n, then n × (row uint32 ascending, D+2 float32)
//	dense        uint32 n, then n float32
//	checksum     uint32   CRC-32C of everything before it
//
// Feature rows that never received a gradient equal their seeded
// initialisation and are not stored, which keeps a snapshot to the rows
// a run actually used. Parameters are stored as float32: training keeps
// them float32-representable, so a snapshot reproduces the policy exactly.
const (
	snapshotMagic  = "RSPOPOL\x00"
	snapshotFormat = 2
	// featureVersion changes whenever the feature extraction changes, so a
	// snapshot is never read with features it was not trained on.
	featureVersion = 8
	headerSize     = 8 + 2 + 2 + 5*4 + 3*8 + 8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// MarshalBinary encodes the policy as a versioned, checksummed snapshot.
// A policy with a parameter that is not a finite float32 is refused
// (CheckFinite): its snapshot could not be loaded.
func (p *Policy) MarshalBinary() ([]byte, error) {
	if err := p.CheckFinite(); err != nil {
		return nil, err
	}
	l := &p.lay
	rows := slices.Clone(p.touched.list)
	slices.Sort(rows)
	dense := p.params[l.sparse:]
	b := make([]byte, 0, headerSize+8+len(rows)*(4+4*l.row)+4*len(dense)+4)
	b = append(b, snapshotMagic...)
	b = binary.LittleEndian.AppendUint16(b, snapshotFormat)
	b = binary.LittleEndian.AppendUint16(b, featureVersion)
	for _, v := range []int{p.cfg.Buckets, p.cfg.EmbedDim, p.cfg.Hidden, p.cfg.History, NumFlags} {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p.cfg.Temperature))
	b = binary.LittleEndian.AppendUint64(b, uint64(p.cfg.Seed))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p.cfg.InitScale))
	b = binary.LittleEndian.AppendUint64(b, uint64(p.version))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(rows)))
	for _, r := range rows {
		b = binary.LittleEndian.AppendUint32(b, uint32(r))
		b = appendFloat32s(b, p.params[l.emb(r):l.emb(r)+l.row])
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(dense)))
	b = appendFloat32s(b, dense)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

func appendFloat32s(b []byte, v []float64) []byte {
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(x)))
	}
	return b
}

func appendFloats(b []byte, v []float64) []byte {
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

// Load decodes a snapshot written by MarshalBinary. Errors match
// ErrSnapshot; a corrupted file also matches ErrSnapshotChecksum and one
// of another format or feature version ErrSnapshotVersion.
func Load(b []byte) (*Policy, error) {
	var p Policy
	if err := p.UnmarshalBinary(b); err != nil {
		return nil, err
	}
	return &p, nil
}

// UnmarshalBinary replaces p with the decoded snapshot; see Load for errors.
func (p *Policy) UnmarshalBinary(b []byte) error {
	if len(b) < len(snapshotMagic) || string(b[:len(snapshotMagic)]) != snapshotMagic {
		return &SnapshotError{Reason: "not a policy snapshot (bad magic)"}
	}
	if len(b) < headerSize+8+4 {
		return &SnapshotError{Reason: fmt.Sprintf("truncated: %d bytes", len(b))}
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if got := crc32.Checksum(body, castagnoli); got != sum {
		return &SnapshotError{Reason: fmt.Sprintf("crc32c %08x, stored %08x", got, sum), Err: ErrSnapshotChecksum}
	}
	r := reader{b: body[len(snapshotMagic):]}
	if f, fv := r.u16(), r.u16(); f != snapshotFormat || fv != featureVersion {
		return &SnapshotError{Reason: fmt.Sprintf("format %d features %d, this build reads format %d features %d", f, fv, snapshotFormat, featureVersion), Err: ErrSnapshotVersion}
	}
	q, err := decodeHeader(&r)
	if err != nil {
		return err
	}
	if err := q.decodeParams(&r); err != nil {
		return err
	}
	q.changed()
	*p = *q
	return nil
}

// decodeHeader reads the configuration and version and builds the policy
// with its initial parameters.
func decodeHeader(r *reader) (*Policy, error) {
	var c Config
	c.Buckets, c.EmbedDim, c.Hidden, c.History = int(r.u32()), int(r.u32()), int(r.u32()), int(r.u32())
	flags := r.u32()
	c.Temperature, c.Seed, c.InitScale = r.f64(), int64(r.u64()), r.f64()
	version := int64(r.u64())
	if flags != NumFlags {
		return nil, &SnapshotError{Reason: fmt.Sprintf("%d match flags, this build has %d", flags, NumFlags), Err: ErrSnapshotVersion}
	}
	if c.History == 0 {
		c.History = NoHistory
	}
	if err := c.Validate(); err != nil || c.Seed == 0 {
		return nil, &SnapshotError{Reason: "invalid config", Err: err}
	}
	p, err := New(c)
	if err != nil {
		return nil, &SnapshotError{Reason: "invalid config", Err: err}
	}
	p.version = version
	return p, nil
}

// decodeParams overwrites the stored rows and the dense parameters.
func (p *Policy) decodeParams(r *reader) error {
	l := &p.lay
	n := int(r.u32())
	if n > l.buckets || r.left() < n*(4+4*l.row) {
		return &SnapshotError{Reason: fmt.Sprintf("%d rows do not fit (%d buckets, %d bytes left)", n, l.buckets, r.left())}
	}
	prev := int64(-1)
	for range n {
		row := int64(r.u32())
		if row <= prev || row >= int64(l.buckets) {
			return &SnapshotError{Reason: fmt.Sprintf("row %d out of order or range", row)}
		}
		prev = row
		p.touched.add(int32(row))
		if !r.float32s(p.params[l.emb(int32(row)) : l.emb(int32(row))+l.row]) {
			return &SnapshotError{Reason: fmt.Sprintf("row %d holds a non-finite parameter", row)}
		}
	}
	dense := p.params[l.sparse:]
	if d := int(r.u32()); d != len(dense) || r.left() != 4*d {
		return &SnapshotError{Reason: fmt.Sprintf("dense part: %d values, %d bytes, want %d values", d, r.left(), len(dense))}
	}
	if !r.float32s(dense) {
		return &SnapshotError{Reason: "a dense parameter is not finite"}
	}
	return nil
}

// reader reads little-endian values; callers check lengths beforehand or
// rely on its zero values past the end, which decoding then rejects.
type reader struct{ b []byte }

func (r *reader) left() int { return len(r.b) }

func (r *reader) take(n int) []byte {
	if len(r.b) < n {
		r.b = r.b[len(r.b):]
		return make([]byte, n)
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) u16() uint16  { return binary.LittleEndian.Uint16(r.take(2)) }
func (r *reader) u32() uint32  { return binary.LittleEndian.Uint32(r.take(4)) }
func (r *reader) u64() uint64  { return binary.LittleEndian.Uint64(r.take(8)) }
func (r *reader) f64() float64 { return math.Float64frombits(r.u64()) }

// float32s reads len(dst) float32 values and reports whether all are finite.
func (r *reader) float32s(dst []float64) bool {
	ok := true
	for i := range dst {
		dst[i] = float64(math.Float32frombits(r.u32()))
		ok = ok && !math.IsNaN(dst[i]) && !math.IsInf(dst[i], 0)
	}
	return ok
}

func (r *reader) floats(dst []float64) {
	for i := range dst {
		dst[i] = r.f64()
	}
}
