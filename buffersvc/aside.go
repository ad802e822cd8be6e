package buffersvc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble"
)

// rebuildAside builds a fresh store of run beside s (in s's directory
// with ".rebuild" appended): it copies there what s holds of every other
// run, calls build on it, and only once build has succeeded puts it in
// place of s's files and reopens s on them. When build fails (a full disk,
// the bus lost, ctx ended) s is left as it was and the fresh store is
// removed, so that a store never holds half a rebuild: a start-up rebuild
// that stored what it could before failing left a store that looked
// complete to the next start, which then served a third of the run.
//
// Records of run that s ingests while build runs are lost with s's old
// files: the caller builds before it consumes, or stops consuming.
func (s *Store) rebuildAside(run string, build func(*Store) error) error {
	tmp, old := filepath.Clean(s.dir)+".rebuild", filepath.Clean(s.dir)+".old"
	if err := errors.Join(os.RemoveAll(tmp), os.RemoveAll(old)); err != nil {
		return fmt.Errorf("buffersvc: rebuild aside: %w", err)
	}
	fresh, err := Open(tmp, s.opts)
	if err != nil {
		return err
	}
	err = s.copyOtherRuns(fresh, run)
	if err == nil {
		err = build(fresh)
	}
	if err = errors.Join(err, fresh.Close()); err != nil {
		return errors.Join(err, os.RemoveAll(tmp))
	}
	return s.swapIn(tmp, old)
}

// copyOtherRuns copies every key of s that is not run's into fresh.
func (s *Store) copyOtherRuns(fresh *Store, run string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	it, err := s.db.NewIter(nil)
	if err != nil {
		return fmt.Errorf("buffersvc: copy: %w", err)
	}
	defer it.Close()
	b := fresh.db.NewBatch()
	for it.First(); it.Valid(); {
		if keyRun(it.Key()) == run { // skip the run's part of this key space unread: it may be what is damaged
			it.SeekGE(prefixEnd(runPrefix(it.Key()[0], run)))
			continue
		}
		if err := b.Set(it.Key(), it.Value(), nil); err != nil {
			return errors.Join(fmt.Errorf("buffersvc: copy: %w", err), b.Close())
		}
		it.Next()
	}
	if err := it.Error(); err != nil {
		return errors.Join(fmt.Errorf("buffersvc: copy: %w", err), b.Close())
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return errors.Join(fmt.Errorf("buffersvc: copy: %w", err), b.Close())
	}
	return b.Close()
}

// keyRun is the run a key belongs to: every key space starts with a
// space byte, then the run, then 0x00.
func keyRun(key []byte) string {
	if len(key) < 2 {
		return ""
	}
	run, _, _ := bytes.Cut(key[1:], []byte{0})
	return string(run)
}

// swapIn closes s's database, puts the directory tmp in place of s's (its
// old files go to old, then away) and reopens s on it.
func (s *Store) swapIn(tmp, old string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.Join(ErrClosed, os.RemoveAll(tmp))
	}
	s.syncing.Wait()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("buffersvc: rebuild aside: close: %w", err)
	}
	err := os.Rename(s.dir, old)
	if err == nil {
		err = os.Rename(tmp, s.dir)
	}
	db, openErr := openDB(s.dir, s.opts)
	if openErr != nil {
		s.closed = true // nothing to serve from; Close reports it
		return errors.Join(err, openErr)
	}
	s.db = db
	if err != nil {
		return fmt.Errorf("buffersvc: rebuild aside: %w", err)
	}
	return os.RemoveAll(old)
}
