package buffersvc

import (
	"bytes"
	"container/heap"
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
	if err := req.Validate(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	sel := newSelector(req.Count, rand.New(rand.NewPCG(uint64(req.Seed), tieSalt)))
	prefer := make(map[string]bool, len(req.PreferTasks))
	for _, t := range req.PreferTasks {
		prefer[t] = true
	}
	if err := s.selectPreferred(sel, run, req.Cycle, prefer); err != nil {
		return nil, err
	}
	if err := s.selectRest(sel, run, req.Cycle, prefer); err != nil {
		return nil, err
	}
	return s.serve(run, req.Cycle, sel.picked)
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

// serve loads the picked records and bumps the cycle's served counter; with
// a cap set, it also counts each record's samples and retires those that
// reached the cap.
func (s *Store) serve(run string, cycle int64, picked []indexEntry) ([]Entry, error) {
	if len(picked) == 0 {
		return nil, nil
	}
	b := s.db.NewBatch()
	defer b.Close()
	out := make([]Entry, 0, len(picked))
	for _, p := range picked {
		e, err := s.serveOne(b, run, cycle, p.id)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	c, err := readCounters(s.db, run, cycle)
	if err != nil {
		return nil, err
	}
	c.Served += int64(len(out))
	if err := b.Set(statsKey(run, cycle), c.encode(), nil); err != nil {
		return nil, fmt.Errorf("buffersvc: write counters: %w", err)
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return nil, fmt.Errorf("buffersvc: commit sample counts: %w", err)
	}
	return out, nil
}

// serveOne reads one record and records in b that it was sampled.
func (s *Store) serveOne(b *pebble.Batch, run string, cycle int64, id string) (Entry, error) {
	m, ok, err := readMeta(s.db, run, cycle, id)
	if err != nil {
		return Entry{}, err
	}
	data, okData, err := get(s.db, recordKey(run, cycle, id))
	if err != nil {
		return Entry{}, err
	}
	if !ok || !okData {
		return Entry{}, fmt.Errorf("%w: index names %s but its record is missing", ErrInternal, id)
	}
	if capN := s.opts.MaxSamplesPerRecord; capN > 0 {
		if err := countSample(b, run, cycle, id, m, capN); err != nil {
			return Entry{}, err
		}
	}
	return Entry{Run: run, Cycle: cycle, ID: id, TaskID: m.TaskID, Reward: m.Reward,
		Distinct: m.Distinct, Repeats: m.Repeats, Success: m.Success, Data: data}, nil
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
