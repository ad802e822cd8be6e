package prm

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
)

// Snapshot layout (all integers little-endian):
//
//	magic    8 bytes  "RSPO-PRM"
//	format   uint16   SnapshotFormat
//	hdrLen   uint32   length of the header
//	header   JSON     snapshotHeader: version, shape, featurizer spec, info
//	nParams  uint32   number of float64 parameters that follow
//	params   float64 × nParams: W1 (hidden×dim, row-major), b1, w2, b2
//	crc      uint32   CRC-32C (Castagnoli) of every preceding byte
const (
	snapshotMagic = "RSPO-PRM"
	// SnapshotFormat is the layout version this code writes and reads.
	SnapshotFormat = 1
	// maxHeaderLen bounds the JSON header a decoder will accept.
	maxHeaderLen = 1 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type snapshotHeader struct {
	Version    int64          `json:"version"`
	Dim        int            `json:"dim"`
	Hidden     int            `json:"hidden"`
	Featurizer FeaturizerSpec `json:"featurizer"`
	Info       ModelInfo      `json:"info"`
}

// EncodeSnapshot serialises m. A model whose featurizer is not a
// SpecFeaturizer returns an error wrapping ErrNotSnapshottable.
func EncodeSnapshot(m *Model) ([]byte, error) {
	if m == nil {
		return nil, errNilModel
	}
	sf, ok := m.feat.(SpecFeaturizer)
	if !ok {
		return nil, fmt.Errorf("%w: %T", ErrNotSnapshottable, m.feat)
	}
	hdr, err := json.Marshal(snapshotHeader{Version: m.Version, Dim: m.dim, Hidden: m.hidden, Featurizer: sf.Spec(), Info: m.Info})
	if err != nil {
		return nil, fmt.Errorf("prm: encode snapshot header: %w", err)
	}
	b := make([]byte, 0, len(snapshotMagic)+2+4+len(hdr)+4+8*len(m.params)+4)
	b = append(b, snapshotMagic...)
	b = binary.LittleEndian.AppendUint16(b, SnapshotFormat)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(hdr)))
	b = append(b, hdr...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(m.params)))
	for _, p := range m.params {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p))
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

// DecodeSnapshot rebuilds a model from EncodeSnapshot's bytes.
//
// Errors: ErrNotSnapshot (foreign bytes), ErrSnapshotVersion (unknown
// format), ErrCorrupt (truncated, checksum mismatch, inconsistent sizes,
// non-finite weights), ErrUnknownFeaturizer or the featurizer's own error.
func DecodeSnapshot(b []byte) (*Model, error) {
	const prefix = len(snapshotMagic) + 2
	if len(b) < len(snapshotMagic) || string(b[:len(snapshotMagic)]) != snapshotMagic {
		return nil, ErrNotSnapshot
	}
	if len(b) < prefix+4+4+4 {
		return nil, fmt.Errorf("%w: %d bytes is too short", ErrCorrupt, len(b))
	}
	if f := binary.LittleEndian.Uint16(b[len(snapshotMagic):]); f != SnapshotFormat {
		return nil, fmt.Errorf("%w: format %d, this build reads %d", ErrSnapshotVersion, f, SnapshotFormat)
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if got := crc32.Checksum(body, castagnoli); got != sum {
		return nil, fmt.Errorf("%w: checksum %08x, stored %08x", ErrCorrupt, got, sum)
	}
	return decodeBody(body[prefix:])
}

// decodeBody parses header and parameters once the checksum has passed.
func decodeBody(b []byte) (*Model, error) {
	hdrLen := binary.LittleEndian.Uint32(b)
	if hdrLen > maxHeaderLen || uint64(hdrLen)+8 > uint64(len(b)) {
		return nil, fmt.Errorf("%w: header length %d does not fit", ErrCorrupt, hdrLen)
	}
	var hdr snapshotHeader
	if err := json.Unmarshal(b[4:4+hdrLen], &hdr); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrCorrupt, err)
	}
	if err := hdr.check(); err != nil {
		return nil, err
	}
	feat, err := NewFeaturizer(hdr.Featurizer)
	if err != nil {
		return nil, fmt.Errorf("prm: snapshot featurizer: %w", err)
	}
	if feat.Dim() != hdr.Dim {
		return nil, fmt.Errorf("%w: featurizer dimension %d, header says %d", ErrCorrupt, feat.Dim(), hdr.Dim)
	}
	rest := b[4+hdrLen:]
	if need := hdr.Hidden*hdr.Dim + 2*hdr.Hidden + 1; len(rest) != 4+8*need {
		return nil, fmt.Errorf("%w: %d bytes of parameters, the shape needs %d", ErrCorrupt, len(rest)-4, 8*need)
	}
	m := newZero(feat, hdr.Hidden)
	m.Version, m.Info = hdr.Version, hdr.Info
	if err := readParams(rest, m.params); err != nil {
		return nil, err
	}
	return m, nil
}

func (h snapshotHeader) check() error {
	switch {
	case h.Version < 0:
		return fmt.Errorf("%w: negative version %d", ErrCorrupt, h.Version)
	case h.Dim < 1 || h.Dim > MaxFeatureDim:
		return fmt.Errorf("%w: dimension %d not in 1..%d", ErrCorrupt, h.Dim, MaxFeatureDim)
	case h.Hidden < 1 || h.Hidden > MaxHidden:
		return fmt.Errorf("%w: hidden width %d not in 1..%d", ErrCorrupt, h.Hidden, MaxHidden)
	}
	return nil
}

// readParams fills params from b: a count that must equal len(params), then
// exactly that many finite float64s.
func readParams(b []byte, params []float64) error {
	n := binary.LittleEndian.Uint32(b)
	if int(n) != len(params) || len(b) != 4+8*len(params) {
		return fmt.Errorf("%w: %d parameters in %d bytes, the shape needs %d", ErrCorrupt, n, len(b)-4, len(params))
	}
	for i := range params {
		p := math.Float64frombits(binary.LittleEndian.Uint64(b[4+8*i:]))
		if math.IsNaN(p) || math.IsInf(p, 0) {
			return fmt.Errorf("%w: parameter %d is %v", ErrCorrupt, i, p)
		}
		params[i] = p
	}
	return nil
}

// SaveFile writes m's snapshot to path atomically (a temporary file in the
// same directory, then a rename).
func SaveFile(path string, m *Model) error {
	b, err := EncodeSnapshot(m)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("prm: save snapshot: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("prm: save snapshot: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("prm: save snapshot: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("prm: save snapshot: %w", err)
	}
	return nil
}

// LoadFile reads a snapshot written by SaveFile; errors are DecodeSnapshot's
// (with the path) or the file system's.
func LoadFile(path string) (*Model, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("prm: load snapshot: %w", err)
	}
	m, err := DecodeSnapshot(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}
