package buffersvc

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/streams"
)

// RebuildResult says what Rebuild read and stored.
type RebuildResult struct {
	// Read counts the swapped messages replayed.
	Read int
	// Skipped counts messages that are not records of the run (the live
	// service dead-lettered them).
	Skipped int
	// Put adds up what the store did with the records.
	Put PutResult
	// ClearedThrough is the watermark the cycle.ended events imply, -1 if none.
	ClearedThrough int64
	// IgnoredEnds counts cycle.ended events of cycles the learner's cycle
	// record does not have ended (forged or broken; the live service
	// dead-lettered them).
	IgnoredEnds int
	// Gaps says what RSPO_SWAPPED lost of the run's records (see
	// SwappedGaps): records that were published, and stored by the live
	// buffer, but can no longer be rebuilt.
	Gaps Gaps
}

// rebuildBatch is how many records Rebuild stores per synced commit.
const rebuildBatch = 512

// Rebuild replays run's history into store — the buffer is a view of the
// log: first the cycle.ended events the learner's cycle record holds,
// which set the clearing watermark (with keepCycles as in Config), then
// every record on rspo.<run>.swapped, stored
// in batches. Records of cleared cycles are dropped as the live service
// drops them; sample counts, which are not in the log, start at zero. It
// returns once it has caught up with the streams as they were when it
// started, and has compacted the store.
func Rebuild(ctx context.Context, js jetstream.JetStream, store *Store, run string, keepCycles int) (RebuildResult, error) {
	if err := (Config{Run: run, KeepCycles: keepCycles}).Validate(); err != nil {
		return RebuildResult{}, err
	}
	res := RebuildResult{ClearedThrough: -1}
	record, err := streams.LoadCycleRecord(ctx, js, run)
	if err != nil {
		return res, fmt.Errorf("buffersvc: rebuild: %w", err)
	}
	err = streams.Replay(ctx, js, streams.ReplayOptions{Run: run, Subject: streams.CtrlKind(cycleEnded)},
		func(m streams.Message) error {
			switch {
			case m.Err != nil || m.Event.Run != run:
			case record.Check(*m.Event) != nil:
				res.IgnoredEnds++ // not the learner's: the live service dead-letters it
			default:
				res.ClearedThrough = max(res.ClearedThrough, m.Event.Cycle-int64(keepCycles))
			}
			return nil
		})
	if err != nil {
		return res, fmt.Errorf("buffersvc: rebuild: read cycle.ended events: %w", err)
	}
	if err := store.ClearThrough(run, res.ClearedThrough); err != nil {
		return res, err
	}
	gaps, err := newGapFinder(ctx, js, run)
	if err != nil {
		return res, fmt.Errorf("buffersvc: rebuild: %w", err)
	}
	var batch []Entry
	flush := func() error {
		r, err := store.Put(batch)
		res.Put.Stored, res.Put.Replaced, res.Put.Dropped = res.Put.Stored+r.Stored, res.Put.Replaced+r.Replaced, res.Put.Dropped+r.Dropped
		batch = batch[:0]
		return err
	}
	err = streams.Replay(ctx, js, streams.ReplayOptions{Run: run, Subject: streams.KindSwapped}, func(m streams.Message) error {
		res.Read++
		gaps.saw(m.Seq)
		if m.Err != nil || m.Trajectory.Run != run {
			res.Skipped++
			return nil
		}
		e, err := EntryOf(m.Trajectory, m.Raw)
		if err != nil {
			res.Skipped++
			return nil
		}
		if batch = append(batch, e); len(batch) == rebuildBatch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err == nil {
		err = store.Compact()
	}
	if err != nil {
		return res, fmt.Errorf("buffersvc: rebuild: %w", err)
	}
	res.Gaps = gaps.result()
	return res, nil
}
