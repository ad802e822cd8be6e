package buffersvc

import (
	"fmt"

	"github.com/cockroachdb/pebble"
)

// cycleRef names one cycle of one run.
type cycleRef struct {
	run   string
	cycle int64
}

// batchWriter applies entries to an indexed batch, keeping index entries and
// per-cycle counters consistent with what the batch already holds (so two
// copies of one record in a batch store once).
type batchWriter struct {
	b        *pebble.Batch
	marks    map[string]int64
	counters map[cycleRef]*cycleCounters
}

func newBatchWriter(b *pebble.Batch) *batchWriter {
	return &batchWriter{b: b, marks: map[string]int64{}, counters: map[cycleRef]*cycleCounters{}}
}

// put writes one validated entry.
func (w *batchWriter) put(e Entry, res *PutResult) error {
	mark, err := w.mark(e.Run)
	if err != nil {
		return err
	}
	if e.Cycle <= mark {
		res.Dropped++
		return nil
	}
	c, err := w.counter(cycleRef{e.Run, e.Cycle})
	if err != nil {
		return err
	}
	m := metaOf(e)
	old, found, err := readMeta(w.b, e.Run, e.Cycle, e.ID)
	if err != nil {
		return err
	}
	if found {
		res.Replaced++
		c.add(old, -1)
		m.Samples, m.Exhausted = old.Samples, old.Exhausted
		if err := deleteIndex(w.b, e.Run, e.Cycle, e.ID, old); err != nil {
			return err
		}
	} else {
		res.Stored++
	}
	c.add(m, +1)
	return writeRecord(w.b, e, m)
}

// mark returns the run's watermark, read once per batch.
func (w *batchWriter) mark(run string) (int64, error) {
	if m, ok := w.marks[run]; ok {
		return m, nil
	}
	m, err := readMark(w.b, run)
	if err != nil {
		return 0, err
	}
	w.marks[run] = m
	return m, nil
}

// counter returns the cycle's counters, read once per batch.
func (w *batchWriter) counter(ref cycleRef) (*cycleCounters, error) {
	if c, ok := w.counters[ref]; ok {
		return c, nil
	}
	c, err := readCounters(w.b, ref.run, ref.cycle)
	if err != nil {
		return nil, err
	}
	w.counters[ref] = &c
	return &c, nil
}

// flushCounters writes the counters touched by the batch.
func (w *batchWriter) flushCounters() error {
	for ref, c := range w.counters {
		if err := w.b.Set(statsKey(ref.run, ref.cycle), c.encode(), nil); err != nil {
			return fmt.Errorf("buffersvc: write counters: %w", err)
		}
	}
	return nil
}

// writeRecord sets the record, its meta and (unless exhausted) its index entries.
func writeRecord(b *pebble.Batch, e Entry, m meta) error {
	if err := b.Set(recordKey(e.Run, e.Cycle, e.ID), e.Data, nil); err != nil {
		return fmt.Errorf("buffersvc: write record: %w", err)
	}
	return writeMeta(b, e.Run, e.Cycle, e.ID, m)
}

// writeMeta sets the meta and, unless exhausted, the index entries.
func writeMeta(b *pebble.Batch, run string, cycle int64, id string, m meta) error {
	if err := b.Set(metaKey(run, cycle, id), m.encode(), nil); err != nil {
		return fmt.Errorf("buffersvc: write meta: %w", err)
	}
	if m.Exhausted {
		return nil
	}
	p := m.priority()
	if err := b.Set(prioKey(run, cycle, p, id), []byte(m.TaskID), nil); err != nil {
		return fmt.Errorf("buffersvc: write index: %w", err)
	}
	if err := b.Set(taskKey(run, cycle, m.TaskID, p, id), nil, nil); err != nil {
		return fmt.Errorf("buffersvc: write index: %w", err)
	}
	return nil
}

// deleteIndex removes the index entries m put there (none if exhausted).
func deleteIndex(b *pebble.Batch, run string, cycle int64, id string, m meta) error {
	if m.Exhausted {
		return nil
	}
	p := m.priority()
	if err := b.Delete(prioKey(run, cycle, p, id), nil); err != nil {
		return fmt.Errorf("buffersvc: delete index: %w", err)
	}
	if err := b.Delete(taskKey(run, cycle, m.TaskID, p, id), nil); err != nil {
		return fmt.Errorf("buffersvc: delete index: %w", err)
	}
	return nil
}

func readMeta(r reader, run string, cycle int64, id string) (meta, bool, error) {
	v, ok, err := get(r, metaKey(run, cycle, id))
	if err != nil || !ok {
		return meta{}, false, err
	}
	m, err := decodeMeta(v)
	return m, err == nil, err
}

func readCounters(r reader, run string, cycle int64) (cycleCounters, error) {
	v, ok, err := get(r, statsKey(run, cycle))
	if err != nil || !ok {
		return cycleCounters{}, err
	}
	return decodeCounters(v)
}
