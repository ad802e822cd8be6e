package policy

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
)

// Adam state format (little endian), so that a restarted learner resumes
// with the same moments:
//
//	magic      8 bytes "RSPOADM\x00"
//	format     uint16  adamFormat
//	shape      Buckets, EmbedDim, Hidden, NumFlags as uint32
//	steps      uint64
//	hyper      LR, Beta1, Beta2, Eps as float64
//	rows       uint32 n, then n × (row uint32 ascending, D+2 m values, D+2 v values)
//	dense      uint32 n, then n m values and n v values
//	checksum   uint32 CRC-32C of everything before it
const (
	adamMagic  = "RSPOADM\x00"
	adamFormat = 1
)

// MarshalBinary encodes the optimiser's state: its moments for the rows
// that have any, the dense moments, the step count and the hyper-parameters.
func (o *Adam) MarshalBinary() ([]byte, error) {
	l := &o.lay
	rows := slices.Clone(o.rows.list)
	slices.Sort(rows)
	b := append([]byte(nil), adamMagic...)
	b = binary.LittleEndian.AppendUint16(b, adamFormat)
	for _, v := range []int{l.buckets, l.d, l.h, NumFlags} {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(o.t))
	b = appendFloats(b, []float64{o.cfg.LR, o.cfg.Beta1, o.cfg.Beta2, o.cfg.Eps})
	b = binary.LittleEndian.AppendUint32(b, uint32(len(rows)))
	for _, r := range rows {
		b = binary.LittleEndian.AppendUint32(b, uint32(r))
		b = appendFloats(b, o.m[l.emb(r):l.emb(r)+l.row])
		b = appendFloats(b, o.v[l.emb(r):l.emb(r)+l.row])
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(l.total-l.sparse))
	b = appendFloats(b, o.m[l.sparse:])
	b = appendFloats(b, o.v[l.sparse:])
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

// LoadAdam decodes an optimiser state for policies shaped like p. Errors
// match ErrSnapshot (ErrSnapshotChecksum for altered bytes, ErrShape inside
// a SnapshotError for another shape).
func LoadAdam(p *Policy, b []byte) (*Adam, error) {
	if len(b) < len(adamMagic) || string(b[:len(adamMagic)]) != adamMagic {
		return nil, &SnapshotError{Reason: "not an optimiser state (bad magic)"}
	}
	if len(b) < len(adamMagic)+2+16+8+32+4+4+4 {
		return nil, &SnapshotError{Reason: fmt.Sprintf("optimiser state truncated: %d bytes", len(b))}
	}
	body := b[:len(b)-4]
	if got, want := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(b[len(b)-4:]); got != want {
		return nil, &SnapshotError{Reason: fmt.Sprintf("optimiser state crc32c %08x, stored %08x", got, want), Err: ErrSnapshotChecksum}
	}
	r := reader{b: body[len(adamMagic):]}
	if f := r.u16(); f != adamFormat {
		return nil, &SnapshotError{Reason: fmt.Sprintf("optimiser state format %d, this build reads %d", f, adamFormat), Err: ErrSnapshotVersion}
	}
	l := &p.lay
	if bk, d, h, nf := r.u32(), r.u32(), r.u32(), r.u32(); int(bk) != l.buckets || int(d) != l.d || int(h) != l.h || nf != NumFlags {
		return nil, &SnapshotError{Reason: fmt.Sprintf("optimiser state for %d buckets × %d, hidden %d, %d flags", bk, d, h, nf), Err: ErrShape}
	}
	steps := r.u64()
	cfg := AdamConfig{LR: r.f64(), Beta1: r.f64(), Beta2: r.f64(), Eps: r.f64()}
	if err := cfg.validate(); err != nil || steps > math.MaxInt32 {
		return nil, &SnapshotError{Reason: "invalid optimiser hyper-parameters or step count", Err: err}
	}
	o, err := NewAdam(p, cfg)
	if err != nil {
		return nil, &SnapshotError{Reason: "invalid optimiser hyper-parameters", Err: err}
	}
	o.t = int(steps)
	if err := o.decodeMoments(&r); err != nil {
		return nil, err
	}
	return o, nil
}

func (o *Adam) decodeMoments(r *reader) error {
	l := &o.lay
	n := int(r.u32())
	if n > l.buckets || r.left() < n*(4+16*l.row) {
		return &SnapshotError{Reason: fmt.Sprintf("%d optimiser rows do not fit", n)}
	}
	prev := int64(-1)
	for range n {
		row := int64(r.u32())
		if row <= prev || row >= int64(l.buckets) {
			return &SnapshotError{Reason: fmt.Sprintf("optimiser row %d out of order or range", row)}
		}
		prev = row
		o.rows.add(int32(row))
		r.floats(o.m[l.emb(int32(row)) : l.emb(int32(row))+l.row])
		r.floats(o.v[l.emb(int32(row)) : l.emb(int32(row))+l.row])
	}
	dense := l.total - l.sparse
	if d := int(r.u32()); d != dense || r.left() != 16*d {
		return &SnapshotError{Reason: fmt.Sprintf("optimiser dense part: %d values, %d bytes, want %d values", d, r.left(), dense)}
	}
	r.floats(o.m[l.sparse:])
	r.floats(o.v[l.sparse:])
	return nil
}
