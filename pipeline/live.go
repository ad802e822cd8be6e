package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/report"
	"github.com/rspo-dev/rspo/streams"
)

// liveReport keeps a run's report tables in step with its metrics stream
// while it trains: it follows rspo.<run>.metrics.> from the stream's start
// and adds every event to a report.Live on the report directory, which
// skips those the directory holds (a resumed run's), so each event is on
// disk moments after it is published, and once.
type liveReport struct {
	js     jetstream.JetStream
	run    string
	w      *report.Live
	cancel context.CancelFunc
	done   chan struct{}

	mu          sync.Mutex
	seq         uint64 // stream sequence of the last message handled
	undecodable int
	err         error // what stopped the follower early
}

// startLiveReport opens the report directory dir and starts following
// run's metrics.
func startLiveReport(ctx context.Context, js jetstream.JetStream, run, dir string) (*liveReport, error) {
	w, err := report.OpenLive(dir)
	if err != nil {
		return nil, err
	}
	fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l := &liveReport{js: js, run: run, w: w, cancel: cancel, done: make(chan struct{})}
	go l.follow(fctx)
	return l, nil
}

// follow adds each metrics message to the tables until ctx ends.
func (l *liveReport) follow(ctx context.Context) {
	defer close(l.done)
	o := streams.ReplayOptions{Run: l.run, Subject: streams.KindMetrics, Follow: true}
	err := streams.Replay(ctx, l.js, o, func(m streams.Message) error {
		var err error
		if m.Metrics != nil {
			_, err = l.w.Add(*m.Metrics)
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		l.seq = m.Seq
		if m.Metrics == nil {
			l.undecodable++
		}
		return err
	})
	if err != nil {
		l.mu.Lock()
		l.err = fmt.Errorf("pipeline: live report of run %s: %w", l.run, err)
		l.mu.Unlock()
	}
}

// catchUpTimeout bounds the wait for the follower at the end of a run: a
// follower that has not caught up by then (a consumer stalled on a
// failing server) is given up, and the report is written from the
// streams instead.
const catchUpTimeout = 2 * time.Minute

// catchUpPoll is how often finish looks whether the follower has caught
// up; it only waits for the messages published in the last moments.
const catchUpPoll = 10 * time.Millisecond

// finish waits until the follower has handled every metrics message the
// stream holds now, stops it and returns the tables, with the number of
// messages that did not decode; or the error that stopped the follower.
func (l *liveReport) finish(ctx context.Context) (*report.Live, int, error) {
	last, err := streams.LastSeq(ctx, l.js, streams.ReplayOptions{Run: l.run, Subject: streams.KindMetrics})
	for err == nil {
		l.mu.Lock()
		seq, ferr := l.seq, l.err
		l.mu.Unlock()
		if err = ferr; err != nil || seq >= last {
			break
		}
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-l.done:
		case <-time.After(catchUpPoll):
		}
	}
	l.cancel()
	<-l.done
	if err == nil {
		err = l.err
	}
	if err != nil {
		l.w.Close()
		return nil, 0, err
	}
	return l.w, l.undecodable, nil
}

// stop ends the following of a run that failed; the tables keep what
// they hold.
func (l *liveReport) stop() {
	l.cancel()
	<-l.done
	l.w.Close()
}

// reportDir is where a run's report lives.
func (c Config) reportDir() string { return filepath.Join(c.DataDir, c.run(), "report") }
