package buffersvc

import (
	"bytes"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/cockroachdb/pebble"
)

// tieSalt is the second PCG seed word; it only needs to be fixed.
const tieSalt = 0x5253504f // "RSPO"

// indexEntry is one record as seen through an index.
type indexEntry struct {
	prio priority
	id   string
}

func compareIndexEntries(a, b indexEntry) int {
	if c := bytes.Compare(a.prio[:], b.prio[:]); c != 0 {
		return c
	}
	return strings.Compare(a.id, b.id)
}

// Sample returns up to req.Count records of run's cycle req.Cycle in the
// order SampleRequest documents, and counts them as served. With
// MaxSamplesPerRecord set, a record that reaches the cap leaves the index.
// It returns ErrBadRequest for an invalid request, ErrClosed after Close.
func (s *Store) Sample(run string, req SampleRequest) ([]Entry, error) {
	var out []Entry
	err := s.sample(run, req, func(metas []meta) error {
		if len(metas) > 0 {
			out = make([]Entry, 0, len(metas))
		}
		return nil
	}, func(id string, m meta, data []byte) {
		out = append(out, Entry{Run: run, Cycle: req.Cycle, ID: id, TaskID: m.TaskID, Reward: m.Reward,
			Distinct: m.Distinct, Repeats: m.Repeats, Success: m.Success, Data: bytes.Clone(data)})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// sampleReply is Sample writing the records straight into a reply body
// of format ReplyFormatRecords, sized once from the records' metas: the
// record bytes are copied once, from Pebble's block into the reply. It
// returns the body and the number of records; ErrBadRequest when they
// would exceed a reply's maxReplyBytes.
func (s *Store) sampleReply(run string, req SampleRequest) ([]byte, int, error) {
	var body []byte
	n := 0
	err := s.sample(run, req, func(metas []meta) error {
		size := 0
		for _, m := range metas {
			size += 4 + int(m.Size)
		}
		if size > maxReplyBytes {
			return fmt.Errorf("%w: %d records of %d bytes exceed a reply's %d bytes (ask for fewer)",
				ErrBadRequest, len(metas), size, maxReplyBytes)
		}
		body = make([]byte, 0, size)
		return nil
	}, func(_ string, _ meta, data []byte) {
		body = binary.BigEndian.AppendUint32(body, uint32(len(data)))
		body = append(body, data...)
		n++
	})
	if err != nil {
		return nil, 0, err
	}
	return body, n, nil
}

// sample selects the records of a Sample, calls begin with their metas
// (before any record is read; an error from it ends the sample, nothing
// counted), then each with every record in order, its bytes valid only
// during the call, and counts the records as served.
func (s *Store) sample(run string, req SampleRequest, begin func([]meta) error, each func(id string, m meta, data []byte)) error {
	if err := req.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	sel := newSelector(req.Count, rand.New(rand.NewPCG(uint64(req.Seed), tieSalt)))
	prefer := make(map[string]bool, len(req.PreferTasks))
	for _, t := range req.PreferTasks {
		prefer[t] = true
	}
	if err := s.selectPreferred(sel, run, req.Cycle, prefer); err != nil {
		return err
	}
	if err := s.selectRest(sel, run, req.Cycle, prefer); err != nil {
		return err
	}
	return s.serve(run, req.Cycle, sel.picked, begin, each)
}

// selectPreferred feeds the records of the preferred tasks to sel in
// priority order, merging the tasks' index ranges and reading only as far
// as sel needs.
func (s *Store) selectPreferred(sel *selector, run string, cycle int64, prefer map[string]bool) error {
	m := &taskMerge{}
	defer m.close()
	for task := range prefer {
		if err := m.open(s.db, taskPrefix(run, cycle, task)); err != nil {
			return err
		}
	}
	heap.Init(m)
	for m.Len() > 0 {
		c := m.cursors[0]
		if !sel.add(c.cur) {
			break
		}
		if err := c.next(); err != nil {
			return err
		}
		if c.it.Valid() {
			heap.Fix(m, 0)
		} else {
			heap.Pop(m)
		}
	}
	sel.flush()
	return nil
}

// selectRest feeds the priority index, minus the preferred tasks' records,
// to sel until it is full.
func (s *Store) selectRest(sel *selector, run string, cycle int64, prefer map[string]bool) error {
	if sel.full() {
		return nil
	}
	prefix := famPrefix(run, cycle, famPrio)
	err := scan(s.db, prefix, func(key, value []byte) (bool, error) {
		if prefer[string(value)] {
			return true, nil
		}
		p, id, ok := splitIndexKey(key, prefix)
		if !ok {
			return false, fmt.Errorf("%w: short priority index key", ErrInternal)
		}
		return sel.add(indexEntry{p, id}), nil
	})
	sel.flush()
	return err
}

// serve reads the picked records' metas, calls begin, hands each record
// to each and bumps the cycle's served counter; with a cap set, it also
// counts each record's samples and retires those that reached the cap.
func (s *Store) serve(run string, cycle int64, picked []indexEntry, begin func([]meta) error, each func(string, meta, []byte)) error {
	metas := make([]meta, len(picked))
	for i, p := range picked {
		m, ok, err := readMeta(s.db, run, cycle, p.id)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: index names %s but its meta is missing", ErrInternal, p.id)
		}
		metas[i] = m
	}
	if err := begin(metas); err != nil {
		return err
	}
	if len(picked) == 0 {
		return nil
	}
	b := s.db.NewBatch()
	defer b.Close()
	key := famPrefix(run, cycle, famRecord)
	prefix := len(key)
	for i, p := range picked {
		key = append(key[:prefix], p.id...) // Get keeps no reference to the key
		if err := s.serveOne(b, run, cycle, p.id, metas[i], key, each); err != nil {
			return err
		}
	}
	c, err := readCounters(s.db, run, cycle)
	if err != nil {
		return err
	}
	c.Served += int64(len(picked))
	if err := b.Set(statsKey(run, cycle), c.encode(), nil); err != nil {
		return fmt.Errorf("buffersvc: write counters: %w", err)
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("buffersvc: commit sample counts: %w", err)
	}
	return nil
}

// serveOne hands the record at key to each, without copying it out of
// Pebble, and records in b that it was sampled.
func (s *Store) serveOne(b *pebble.Batch, run string, cycle int64, id string, m meta, key []byte, each func(string, meta, []byte)) error {
	data, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return fmt.Errorf("%w: index names %s but its record is missing", ErrInternal, id)
	}
	if err != nil {
		return fmt.Errorf("buffersvc: read: %w", err)
	}
	each(id, m, data)
	if err := closer.Close(); err != nil {
		return fmt.Errorf("buffersvc: read: %w", err)
	}
	if capN := s.opts.MaxSamplesPerRecord; capN > 0 {
		return countSample(b, run, cycle, id, m, capN)
	}
	return nil
}

// countSample records in b that the record was sampled once more and
// retires it from the index when it reaches capN.
func countSample(b *pebble.Batch, run string, cycle int64, id string, m meta, capN int) error {
	m.Samples++
	if int(m.Samples) >= capN {
		if err := deleteIndex(b, run, cycle, id, m); err != nil {
			return err
		}
		m.Exhausted = true
	}
	return writeMeta(b, run, cycle, id, m)
}

// scan calls fn for each key under prefix in order until fn returns false.
func scan(db *pebble.DB, prefix []byte, fn func(key, value []byte) (bool, error)) error {
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return fmt.Errorf("buffersvc: scan: %w", err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		more, err := fn(it.Key(), it.Value())
		if err != nil {
			return err
		}
		if !more {
			break
		}
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("buffersvc: scan: %w", err)
	}
	return nil
}
