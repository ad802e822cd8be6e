package buffersvc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"sync"

	"github.com/cockroachdb/pebble"
)

// Options configure a Store. The zero value is valid.
type Options struct {
	// MaxSamplesPerRecord caps how often Sample may return one record; once
	// reached, the record leaves the priority index for good (it stays in
	// the store and the statistics). Samples are counted per record only
	// while a cap is set. 0, the default, means no cap.
	MaxSamplesPerRecord int
	// MemTableBytes is Pebble's memtable size. Records are large (about
	// 20 KB for 32 steps), and a small memtable flushes and compacts them
	// often; up to two memtables are held in memory. Default 64 MiB.
	MemTableBytes int64
	// BlockCacheBytes is the size of Pebble's cache of uncompressed
	// sstable blocks, which a sample reads its records through: a record
	// (about 20 KB) is one block, so a cache of a cycle's records makes a
	// sample a memory copy instead of a file read and a decompression per
	// record. The cache grows to this size as records are read. Default
	// 256 MiB, about 13,000 records of 32 steps; 0 means the default, not
	// no cache (the smallest is 1 MiB).
	BlockCacheBytes int64
}

// Validate reports every problem with the options.
func (o Options) Validate() error {
	var errs []error
	if o.MaxSamplesPerRecord < 0 {
		errs = append(errs, fmt.Errorf("%w: max samples per record %d is negative (0 means no cap)", ErrInvalidConfig, o.MaxSamplesPerRecord))
	}
	if o.MemTableBytes < 0 || o.MemTableBytes >= 4<<30 {
		errs = append(errs, fmt.Errorf("%w: memtable size %d not in 1..4GiB (0 for the default)", ErrInvalidConfig, o.MemTableBytes))
	}
	if o.BlockCacheBytes != 0 && (o.BlockCacheBytes < minBlockCacheBytes || o.BlockCacheBytes > maxBlockCacheBytes) {
		errs = append(errs, fmt.Errorf("%w: block cache size %d not in 1MiB..64GiB (0 for the default)", ErrInvalidConfig, o.BlockCacheBytes))
	}
	return errors.Join(errs...)
}

// Options' defaults and bounds.
const (
	defaultMemTableBytes   = 64 << 20
	defaultBlockCacheBytes = 256 << 20
	minBlockCacheBytes     = 1 << 20
	maxBlockCacheBytes     = 64 << 30
)

// Store is the Pebble-backed buffer. It is safe for concurrent use; writes
// and samples are serialised by a mutex.
type Store struct {
	mu     sync.Mutex
	db     *pebble.DB
	dir    string
	opts   Options
	closed bool
	// syncing counts Puts between their commit and their WAL sync, which
	// run without mu; Close waits for them.
	syncing sync.WaitGroup
}

// PutResult says what Put did with each entry.
type PutResult struct {
	// Stored counts new records, Replaced records that overwrote themselves
	// (a redelivery), Dropped records of cycles already cleared.
	Stored, Replaced, Dropped int
}

// Open opens (creating if needed) the store in dir.
func Open(dir string, opts Options) (*Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	db, err := openDB(dir, opts)
	if err != nil {
		return nil, err
	}
	return &Store{db: db, dir: dir, opts: opts}, nil
}

// openDB opens the Pebble database in dir with opts' sizes.
func openDB(dir string, opts Options) (*pebble.DB, error) {
	memtable := uint64(defaultMemTableBytes)
	if opts.MemTableBytes > 0 {
		memtable = uint64(opts.MemTableBytes)
	}
	cacheSize := int64(defaultBlockCacheBytes)
	if opts.BlockCacheBytes > 0 {
		cacheSize = opts.BlockCacheBytes
	}
	cache := pebble.NewCache(cacheSize)
	defer cache.Unref() // the database holds its own reference
	db, err := pebble.Open(dir, &pebble.Options{Logger: quietLogger{}, MemTableSize: memtable, Cache: cache})
	if err != nil {
		return nil, fmt.Errorf("buffersvc: open store %s: %w", dir, err)
	}
	return db, nil
}

// Close flushes the memtables and closes the store. Further calls return
// ErrClosed.
//
// Pebble's own Close keeps every write-ahead log whose memtable is not
// flushed, and each log is preallocated to 110% of MemTableBytes whatever
// its memtable's size (memtables start small and double): a finished
// run's buffer kept about 0.5 GB of logs for a few MB of records, most of
// them cleared. After the flush the logs are obsolete and go (see
// dropRecycledLogs), and what stays is the sstables of the records the
// store still holds.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.closed = true
	s.mu.Unlock()
	s.syncing.Wait()
	if err := s.db.Flush(); err != nil {
		return errors.Join(fmt.Errorf("buffersvc: flush: %w", err), s.db.Close())
	}
	if err := s.db.Close(); err != nil {
		return err
	}
	return dropRecycledLogs(s.dir, s.opts)
}

// dropRecycledLogs opens and closes the database in dir once more, with
// nothing written: Pebble keeps up to three obsolete write-ahead logs,
// each preallocated to 110% of the memtable, for reuse by a live
// database, and deletes them only when it opens (144 MB of a finished
// run's 145 MB buffer). An open with nothing to replay is quick.
func dropRecycledLogs(dir string, opts Options) error {
	db, err := openDB(dir, opts)
	if err != nil {
		return err
	}
	return db.Close()
}

// Put stores the entries in one batch and returns once the batch is synced
// to disk. An entry whose (run, cycle, id) exists overwrites it (keeping its
// sample count); an entry of a cycle at or below the run's clearing
// watermark is dropped. Put returns ErrInvalidEntry (and stores nothing)
// when an entry fails Validate, ErrClosed after Close.
//
// The batch is applied under the store's lock but synced after it is
// released, so a sample does not wait behind the fsync: a sample may then
// see records that a crash would lose, which the stream redelivers (they
// are acked only after Put returns).
func (s *Store) Put(entries []Entry) (PutResult, error) {
	for i, e := range entries {
		if err := e.Validate(); err != nil {
			return PutResult{}, fmt.Errorf("entry %d (%s): %w", i, e.ID, err)
		}
	}
	res, err := s.apply(entries)
	if err != nil {
		return res, err
	}
	defer s.syncing.Done()
	if err := s.db.LogData(nil, pebble.Sync); err != nil { // syncs the WAL through the batch
		return PutResult{}, fmt.Errorf("buffersvc: sync: %w", err)
	}
	return res, nil
}

// apply writes the entries in one batch without syncing it, and counts
// the Put as syncing (the caller calls s.syncing.Done).
func (s *Store) apply(entries []Entry) (PutResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return PutResult{}, ErrClosed
	}
	b := s.db.NewIndexedBatch()
	defer b.Close()
	w := newBatchWriter(b)
	var res PutResult
	for _, e := range entries {
		if err := w.put(e, &res); err != nil {
			return PutResult{}, err
		}
	}
	if err := w.flushCounters(); err != nil {
		return PutResult{}, err
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return PutResult{}, fmt.Errorf("buffersvc: commit: %w", err)
	}
	s.syncing.Add(1)
	return res, nil
}

// ClearThrough deletes every record of run with a cycle ≤ cycle and raises
// the run's watermark so later entries of those cycles are dropped. A
// negative cycle clears nothing.
func (s *Store) ClearThrough(run string, cycle int64) error {
	if cycle < 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	mark, err := readMark(s.db, run)
	if err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer b.Close()
	for _, space := range []byte{spaceCycle, spaceStats} {
		end := prefixEnd(runPrefix(space, run))
		if cycle < math.MaxInt64 {
			end = cyclePrefix(space, run, cycle+1)
		}
		if err := b.DeleteRange(cyclePrefix(space, run, 0), end, nil); err != nil {
			return fmt.Errorf("buffersvc: clear: %w", err)
		}
	}
	if cycle > mark {
		if err := b.Set(markKey(run), binary.BigEndian.AppendUint64(nil, uint64(cycle)), nil); err != nil {
			return fmt.Errorf("buffersvc: clear: %w", err)
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("buffersvc: clear: %w", err)
	}
	return nil
}

// Forget deletes everything the store holds of run — records, per-cycle
// stats and the clearing watermark — as if it had never seen the run.
// A buffer whose store outlived the run's log (see reconcileWithLog) calls
// it before the log is consumed again.
func (s *Store) Forget(run string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	b := s.db.NewBatch()
	defer b.Close()
	for _, space := range []byte{spaceCycle, spaceStats} {
		if err := b.DeleteRange(runPrefix(space, run), prefixEnd(runPrefix(space, run)), nil); err != nil {
			return fmt.Errorf("buffersvc: forget: %w", err)
		}
	}
	if err := b.Delete(markKey(run), nil); err != nil {
		return fmt.Errorf("buffersvc: forget: %w", err)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("buffersvc: forget: %w", err)
	}
	return nil
}

// Compact compacts the whole store, so that reads no longer pay for the
// overlapping files a burst of writes leaves behind. Rebuild calls it; a
// live service does not need to (Pebble compacts in the background).
func (s *Store) Compact() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if err := s.db.Compact([]byte{0}, []byte{0xff}, true); err != nil {
		return fmt.Errorf("buffersvc: compact: %w", err)
	}
	return nil
}

// ClearedThrough returns the run's watermark: the highest cycle cleared,
// or -1 when nothing has been cleared.
func (s *Store) ClearedThrough(run string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	return readMark(s.db, run)
}

// Record returns a copy of the stored record, or ok = false if absent.
func (s *Store) Record(run string, cycle int64, id string) (data []byte, ok bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false, ErrClosed
	}
	return get(s.db, recordKey(run, cycle, id))
}

// IDs lists the ids of run's records in cycle, in key order.
func (s *Store) IDs(run string, cycle int64) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	prefix := famPrefix(run, cycle, famMeta)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return nil, fmt.Errorf("buffersvc: scan: %w", err)
	}
	defer it.Close()
	var ids []string
	for it.First(); it.Valid(); it.Next() {
		ids = append(ids, string(it.Key()[len(prefix):]))
	}
	return ids, it.Error()
}

// reader is the read side shared by the database and an indexed batch.
type reader interface {
	Get(key []byte) ([]byte, io.Closer, error)
}

var (
	_ reader = (*pebble.DB)(nil)
	_ reader = (*pebble.Batch)(nil)
)

// get returns a copy of the value at key, or ok = false if absent.
func get(r reader, key []byte) ([]byte, bool, error) {
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("buffersvc: read: %w", err)
	}
	defer closer.Close()
	return append([]byte(nil), v...), true, nil
}

// readMark returns the run's clearing watermark, -1 when none.
func readMark(r reader, run string) (int64, error) {
	v, ok, err := get(r, markKey(run))
	if err != nil || !ok {
		return -1, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: watermark of %d bytes", ErrInternal, len(v))
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

// quietLogger drops Pebble's informational lines and keeps its errors.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any)              {}
func (quietLogger) Errorf(format string, args ...any) { log.Printf("pebble: "+format, args...) }
func (quietLogger) Fatalf(format string, args ...any) { log.Fatalf("pebble: "+format, args...) }
