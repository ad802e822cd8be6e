package learner

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"

	"github.com/rspo-dev/rspo/policy"
)

// Trainer state format (little endian): what a restarted learner needs,
// besides the policy snapshot itself, to continue exactly where it stopped.
//
//	magic      8 bytes "RSPOTRN\x00"
//	format     uint16  stateFormat
//	updates    int64
//	rng        uint32 n, n bytes (math/rand/v2 PCG state)
//	reference  uint32 n, n bytes (policy snapshot of π_ref)
//	optimiser  uint32 n, n bytes (policy.Adam state)
//	checksum   uint32 CRC-32C of everything before it
const (
	stateMagic  = "RSPOTRN\x00"
	stateFormat = 1
)

// ErrState means a trainer state cannot be restored.
var ErrState = errors.New("learner: bad trainer state")

// MarshalState encodes the trainer's state: update count, shuffling
// source, reference policy and optimiser moments. Store it with the policy
// snapshot of the same update; RestoreState continues from the pair.
func (t *Trainer) MarshalState() ([]byte, error) {
	parts := make([][]byte, 3)
	var err error
	if parts[0], err = t.src.MarshalBinary(); err != nil {
		return nil, err
	}
	if parts[1], err = t.ref.MarshalBinary(); err != nil {
		return nil, err
	}
	if parts[2], err = t.opt.MarshalBinary(); err != nil {
		return nil, err
	}
	b := append([]byte(nil), stateMagic...)
	b = binary.LittleEndian.AppendUint16(b, stateFormat)
	b = binary.LittleEndian.AppendUint64(b, uint64(t.updates))
	for _, p := range parts {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(p)))
		b = append(b, p...)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli))), nil
}

// RestoreState replaces the trainer's state with one written by
// MarshalState for a policy of the same shape. Errors match ErrState (and
// policy.ErrSnapshot or policy.ErrShape for the parts); on error the
// trainer is unchanged.
func (t *Trainer) RestoreState(b []byte) error {
	parts, updates, err := splitState(b)
	if err != nil {
		return err
	}
	src := &rand.PCG{}
	if err := src.UnmarshalBinary(parts[0]); err != nil {
		return fmt.Errorf("%w: shuffling source: %w", ErrState, err)
	}
	ref, err := policy.Load(parts[1])
	if err != nil {
		return fmt.Errorf("%w: reference policy: %w", ErrState, err)
	}
	if !ref.SameShape(t.pol) {
		return fmt.Errorf("%w: reference policy: %w", ErrState, policy.ErrShape)
	}
	opt, err := policy.LoadAdam(t.pol, parts[2])
	if err != nil {
		return fmt.Errorf("%w: optimiser: %w", ErrState, err)
	}
	t.src, t.rng, t.ref, t.opt, t.updates = src, rand.New(src), ref, opt, updates
	return nil
}

// splitState checks the envelope and returns the three parts.
func splitState(b []byte) ([][]byte, int64, error) {
	const head = len(stateMagic) + 2 + 8
	if len(b) < head+4 || string(b[:len(stateMagic)]) != stateMagic {
		return nil, 0, fmt.Errorf("%w: not a trainer state", ErrState)
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, 0, fmt.Errorf("%w: checksum mismatch", ErrState)
	}
	if f := binary.LittleEndian.Uint16(body[len(stateMagic):]); f != stateFormat {
		return nil, 0, fmt.Errorf("%w: format %d, this build reads %d", ErrState, f, stateFormat)
	}
	updates := int64(binary.LittleEndian.Uint64(body[len(stateMagic)+2:]))
	rest := body[head:]
	parts := make([][]byte, 3)
	for i := range parts {
		if len(rest) < 4 {
			return nil, 0, fmt.Errorf("%w: truncated", ErrState)
		}
		n := binary.LittleEndian.Uint32(rest)
		if uint64(n) > uint64(len(rest)-4) {
			return nil, 0, fmt.Errorf("%w: part %d of %d bytes overruns", ErrState, i, n)
		}
		parts[i], rest = rest[4:4+n], rest[4+n:]
	}
	if len(rest) != 0 || updates < 0 {
		return nil, 0, fmt.Errorf("%w: %d trailing bytes, %d updates", ErrState, len(rest), updates)
	}
	return parts, updates, nil
}
