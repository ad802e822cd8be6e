package buffersvc

import (
	"encoding/binary"
	"fmt"
	"math"
)

// meta is what the store keeps beside each record to maintain its index
// entries and statistics when the record is overwritten, sampled or cleared.
type meta struct {
	Reward   float64
	Distinct int32
	Repeats  int32
	// Samples counts how often Sample has returned the record while
	// Options.MaxSamplesPerRecord was set.
	Samples uint32
	// Size is the record's length in bytes.
	Size    uint32
	Success bool
	// Exhausted is set once Samples reached the store's cap; the record then
	// has no index entries and is never sampled again.
	Exhausted bool
	TaskID    string
}

const metaFixedLen = 8 + 4 + 4 + 4 + 4 + 1

const (
	flagSuccess   = 1 << 0
	flagExhausted = 1 << 1
)

func metaOf(e Entry) meta {
	return meta{Reward: e.Reward, Distinct: e.Distinct, Repeats: e.Repeats,
		Size: uint32(len(e.Data)), Success: e.Success, TaskID: e.TaskID}
}

func (m meta) priority() priority { return priorityOf(m.Reward, m.Distinct, m.Repeats) }

func (m meta) encode() []byte {
	b := make([]byte, metaFixedLen, metaFixedLen+len(m.TaskID))
	binary.BigEndian.PutUint64(b[0:], math.Float64bits(m.Reward))
	binary.BigEndian.PutUint32(b[8:], uint32(m.Distinct))
	binary.BigEndian.PutUint32(b[12:], uint32(m.Repeats))
	binary.BigEndian.PutUint32(b[16:], m.Samples)
	binary.BigEndian.PutUint32(b[20:], m.Size)
	var flags byte
	if m.Success {
		flags |= flagSuccess
	}
	if m.Exhausted {
		flags |= flagExhausted
	}
	b[24] = flags
	return append(b, m.TaskID...)
}

func decodeMeta(b []byte) (meta, error) {
	if len(b) < metaFixedLen {
		return meta{}, fmt.Errorf("%w: meta value of %d bytes, want at least %d", ErrInternal, len(b), metaFixedLen)
	}
	return meta{
		Reward:    math.Float64frombits(binary.BigEndian.Uint64(b[0:])),
		Distinct:  int32(binary.BigEndian.Uint32(b[8:])),
		Repeats:   int32(binary.BigEndian.Uint32(b[12:])),
		Samples:   binary.BigEndian.Uint32(b[16:]),
		Size:      binary.BigEndian.Uint32(b[20:]),
		Success:   b[24]&flagSuccess != 0,
		Exhausted: b[24]&flagExhausted != 0,
		TaskID:    string(b[metaFixedLen:]),
	}, nil
}

// cycleCounters are the per-cycle statistics the store maintains.
type cycleCounters struct {
	Records   int64
	Bytes     int64
	Successes int64
	RewardSum float64
	Served    int64
}

const countersLen = 5 * 8

func (c *cycleCounters) add(m meta, sign int64) {
	c.Records += sign
	c.Bytes += sign * int64(m.Size)
	if m.Success {
		c.Successes += sign
	}
	c.RewardSum += float64(sign) * m.Reward
}

func (c cycleCounters) encode() []byte {
	b := make([]byte, countersLen)
	binary.BigEndian.PutUint64(b[0:], uint64(c.Records))
	binary.BigEndian.PutUint64(b[8:], uint64(c.Bytes))
	binary.BigEndian.PutUint64(b[16:], uint64(c.Successes))
	binary.BigEndian.PutUint64(b[24:], math.Float64bits(c.RewardSum))
	binary.BigEndian.PutUint64(b[32:], uint64(c.Served))
	return b
}

func decodeCounters(b []byte) (cycleCounters, error) {
	if len(b) != countersLen {
		return cycleCounters{}, fmt.Errorf("%w: counters value of %d bytes, want %d", ErrInternal, len(b), countersLen)
	}
	return cycleCounters{
		Records:   int64(binary.BigEndian.Uint64(b[0:])),
		Bytes:     int64(binary.BigEndian.Uint64(b[8:])),
		Successes: int64(binary.BigEndian.Uint64(b[16:])),
		RewardSum: math.Float64frombits(binary.BigEndian.Uint64(b[24:])),
		Served:    int64(binary.BigEndian.Uint64(b[32:])),
	}, nil
}
