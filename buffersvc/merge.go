package buffersvc

import (
	"fmt"

	"github.com/cockroachdb/pebble"
)

// taskCursor walks one task's index range.
type taskCursor struct {
	it     *pebble.Iterator
	prefix []byte
	cur    indexEntry
}

// next moves to the following entry and decodes it (if any).
func (c *taskCursor) next() error {
	c.it.Next()
	return c.decode()
}

// decode reads the entry under the iterator, if it is valid.
func (c *taskCursor) decode() error {
	if !c.it.Valid() {
		if err := c.it.Error(); err != nil {
			return fmt.Errorf("buffersvc: scan task index: %w", err)
		}
		return nil
	}
	p, id, ok := splitIndexKey(c.it.Key(), c.prefix)
	if !ok {
		return fmt.Errorf("%w: short task index key", ErrInternal)
	}
	c.cur = indexEntry{p, id}
	return nil
}

// taskMerge is a min-heap of task cursors by their current entry: a k-way
// merge of the preferred tasks' index ranges into one priority order.
type taskMerge struct {
	cursors []*taskCursor
	all     []*taskCursor
}

// open adds a cursor over the index range under prefix, if it is not empty.
func (m *taskMerge) open(db *pebble.DB, prefix []byte) error {
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return fmt.Errorf("buffersvc: scan task index: %w", err)
	}
	c := &taskCursor{it: it, prefix: prefix}
	m.all = append(m.all, c)
	it.First()
	if err := c.decode(); err != nil {
		return err
	}
	if it.Valid() {
		m.cursors = append(m.cursors, c)
	}
	return nil
}

// close closes every cursor opened.
func (m *taskMerge) close() {
	for _, c := range m.all {
		c.it.Close()
	}
}

func (m *taskMerge) Len() int { return len(m.cursors) }
func (m *taskMerge) Less(i, j int) bool {
	return compareIndexEntries(m.cursors[i].cur, m.cursors[j].cur) < 0
}
func (m *taskMerge) Swap(i, j int) { m.cursors[i], m.cursors[j] = m.cursors[j], m.cursors[i] }
func (m *taskMerge) Push(x any)    { m.cursors = append(m.cursors, x.(*taskCursor)) }
func (m *taskMerge) Pop() any {
	c := m.cursors[len(m.cursors)-1]
	m.cursors = m.cursors[:len(m.cursors)-1]
	return c
}
