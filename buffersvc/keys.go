package buffersvc

import (
	"encoding/binary"
	"math"
)

// Key layout. Everything of one (run, cycle) shares a prefix, so clearing a
// range of cycles is one DeleteRange per key space:
//
//	'B' run 0x00 cycle(8) 'r' id                       → record (Arrow IPC)
//	'B' run 0x00 cycle(8) 'm' id                       → meta (see meta.go)
//	'B' run 0x00 cycle(8) 'p' priority(16) id          → task id
//	'B' run 0x00 cycle(8) 't' len(2) task priority(16) id → empty
//	'S' run 0x00 cycle(8)                              → cycle statistics
//	'W' run 0x00                                       → cleared-through cycle
//
// Integers are big-endian so byte order is numeric order; cycles are ≥ 0.
const (
	spaceCycle = 'B'
	spaceStats = 'S'
	spaceMark  = 'W'

	famRecord = 'r'
	famMeta   = 'm'
	famPrio   = 'p'
	famTask   = 't'
)

// priorityLen is the size of an encoded priority.
const priorityLen = 16

// priority is the byte-ordered sampling key: reward descending, distinct
// states descending, repeated visits ascending.
type priority [priorityLen]byte

// priorityOf encodes the three keys so that bytes.Compare gives the order.
func priorityOf(reward float64, distinct, repeats int32) priority {
	var p priority
	binary.BigEndian.PutUint64(p[0:8], ^orderedFloat(reward))
	binary.BigEndian.PutUint32(p[8:12], ^uint32(distinct))
	binary.BigEndian.PutUint32(p[12:16], uint32(repeats))
	return p
}

// orderedFloat maps a finite float64 to a uint64 with the same order; -0 and
// +0 map to the same value.
func orderedFloat(f float64) uint64 {
	if f == 0 {
		f = 0
	}
	b := math.Float64bits(f)
	if b&(1<<63) != 0 {
		return ^b
	}
	return b | 1<<63
}

// runPrefix is the start of one run's part of a key space.
func runPrefix(space byte, run string) []byte {
	k := make([]byte, 0, len(run)+2+8+1+priorityLen+32)
	k = append(k, space)
	k = append(k, run...)
	return append(k, 0)
}

// cyclePrefix is the start of one (run, cycle) in a key space.
func cyclePrefix(space byte, run string, cycle int64) []byte {
	return binary.BigEndian.AppendUint64(runPrefix(space, run), uint64(cycle))
}

// famPrefix is the start of one family of keys of a (run, cycle).
func famPrefix(run string, cycle int64, fam byte) []byte {
	return append(cyclePrefix(spaceCycle, run, cycle), fam)
}

func recordKey(run string, cycle int64, id string) []byte {
	return append(famPrefix(run, cycle, famRecord), id...)
}

func metaKey(run string, cycle int64, id string) []byte {
	return append(famPrefix(run, cycle, famMeta), id...)
}

func prioKey(run string, cycle int64, p priority, id string) []byte {
	k := append(famPrefix(run, cycle, famPrio), p[:]...)
	return append(k, id...)
}

// taskPrefix is the start of one task's index entries in a (run, cycle).
func taskPrefix(run string, cycle int64, task string) []byte {
	k := binary.BigEndian.AppendUint16(famPrefix(run, cycle, famTask), uint16(len(task)))
	return append(k, task...)
}

func taskKey(run string, cycle int64, task string, p priority, id string) []byte {
	k := append(taskPrefix(run, cycle, task), p[:]...)
	return append(k, id...)
}

func statsKey(run string, cycle int64) []byte { return cyclePrefix(spaceStats, run, cycle) }

func markKey(run string) []byte { return runPrefix(spaceMark, run) }

// splitIndexKey returns the priority and id that follow prefix in an index
// key, or ok = false when the key is too short.
func splitIndexKey(key, prefix []byte) (p priority, id string, ok bool) {
	rest := key[len(prefix):]
	if len(rest) < priorityLen {
		return p, "", false
	}
	copy(p[:], rest[:priorityLen])
	return p, string(rest[priorityLen:]), true
}

// cycleOfStatsKey decodes the cycle of a statistics key of run.
func cycleOfStatsKey(key []byte, run string) (int64, bool) {
	n := len(runPrefix(spaceStats, run))
	if len(key) != n+8 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(key[n:])), true
}

// prefixEnd returns the smallest key greater than every key with prefix.
func prefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil // every byte was 0xff: no upper bound
}
