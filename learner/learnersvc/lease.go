package learnersvc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/streams"
)

// One run, one learner. Two learners of one run on one server would both
// resume from the checkpoint and both train, each publishing versions and
// events the other's actors and explorers answer. A learner therefore
// holds the run's lease, a key of the state bucket it rewrites every
// TTL/5 with a compare-and-swap on the key's revision; another learner
// that finds the key rewritten while it watches is refused, naming the
// holder, and one that sees it unchanged for a whole TTL (its holder
// died: killed, its machine gone) takes it over with the same
// compare-and-swap, so a restarted learner waits at most one TTL. A
// holder whose heartbeat finds the key taken over stops: it was cut off
// for longer than the TTL, and another learner trains the run now.

// DefaultLeaseTTL is how long a learner's lease outlives its last
// heartbeat unless LeaseOptions.TTL says otherwise: short, so a killed
// learner's restart waits seconds, not minutes.
const DefaultLeaseTTL = 5 * time.Second

// leaseBeats is how many heartbeats a TTL holds.
const leaseBeats = 5

// LeaseKey is the state key of run's learner lease: <run>.learner.lease.
func LeaseKey(run string) string { return streams.StateKey(run, "learner", "lease") }

// LeaseHolder is the value of a run's lease, as JSON: who holds it, since
// when, and for how long after its last write (the KV entry's time) it
// holds without a heartbeat.
type LeaseHolder struct {
	Host string `json:"host"`
	PID  int    `json:"pid"`
	// Started is when the holder took the lease; Renewed when it last
	// wrote it (by the holder's clock).
	Started time.Time `json:"started"`
	Renewed time.Time `json:"renewed"`
	// TTLMillis is the lease's TTL in milliseconds: the key is rewritten
	// every TTL/5, and a key not rewritten for a TTL is the lease of a
	// learner that stopped.
	TTLMillis int64 `json:"ttl_ms"`
	// Token tells one acquisition from every other (a restarted process
	// may have the same host and pid).
	Token string `json:"token"`
}

func (h LeaseHolder) String() string {
	return fmt.Sprintf("the learner on host %s, pid %d, since %s", h.Host, h.PID, h.Started.Format(time.RFC3339))
}

// ErrLeaseHeld matches LeaseHeldError.
var ErrLeaseHeld = errors.New("learnersvc: the run is being trained by another learner")

// ErrLeaseLost means another learner took over the run's lease while this
// one held it: this one was cut off (paused, partitioned) for longer than
// the lease's TTL.
var ErrLeaseLost = errors.New("learnersvc: another learner took over the run's lease")

// LeaseHeldError says who holds the lease of the run another learner
// wanted to train. It matches ErrLeaseHeld.
type LeaseHeldError struct {
	Run    string
	Holder LeaseHolder
}

func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("learnersvc: run %s is being trained by %s (lease %s in %s, renewed every %v): stop it first, or train under another run name",
		e.Run, e.Holder, LeaseKey(e.Run), streams.BucketState, time.Duration(e.Holder.TTLMillis)*time.Millisecond/leaseBeats)
}

// Is makes errors.Is(err, ErrLeaseHeld) true.
func (e *LeaseHeldError) Is(target error) bool { return target == ErrLeaseHeld }

// LeaseOptions configure AcquireLease.
type LeaseOptions struct {
	// TTL is how long the lease outlives its holder's last heartbeat; the
	// holder renews it every TTL/5. Default DefaultLeaseTTL.
	TTL time.Duration
	// Logger reports heartbeats that failed. Default slog.Default().
	Logger *slog.Logger
}

// Lease is a held run lease; its heartbeat runs until Release.
type Lease struct {
	kv     jetstream.KeyValue
	key    string
	holder LeaseHolder
	ttl    time.Duration
	log    *slog.Logger

	mu   sync.Mutex
	rev  uint64
	lost chan struct{}
	// failing is set while renewals fail for another reason than a
	// takeover (the bus reconnecting).
	failing bool

	stop func()
	done chan struct{}
}

// AcquireLease takes run's learner lease and keeps it with a heartbeat
// until Release. A lease another learner renews is refused with a
// *LeaseHeldError naming it (after at most one heartbeat interval of
// watching); a lease nobody renews for a TTL is taken over.
func AcquireLease(ctx context.Context, js jetstream.JetStream, run string, opts LeaseOptions) (*Lease, error) {
	if opts.TTL == 0 {
		opts.TTL = DefaultLeaseTTL
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	kv, err := streams.State(ctx, js)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	token := make([]byte, 8)
	_, _ = rand.Read(token) // crypto/rand.Read does not fail
	now := time.Now().UTC()
	l := &Lease{kv: kv, key: LeaseKey(run), ttl: opts.TTL, log: opts.Logger, lost: make(chan struct{}), done: make(chan struct{}),
		holder: LeaseHolder{Host: host, PID: os.Getpid(), Started: now, Renewed: now, TTLMillis: opts.TTL.Milliseconds(), Token: hex.EncodeToString(token)}}
	if err := l.take(ctx, run); err != nil {
		return nil, err
	}
	hctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	l.stop = stop
	go l.heartbeat(hctx)
	return l, nil
}

// take acquires the key: creates it, or takes over a holder's that stayed
// unchanged for its TTL.
func (l *Lease) take(ctx context.Context, run string) error {
	for {
		val, _ := json.Marshal(l.holder)
		e, err := l.kv.Get(ctx, l.key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			rev, err := l.kv.Create(ctx, l.key, val)
			if errors.Is(err, jetstream.ErrKeyExists) {
				continue // another learner created it first: watch theirs
			}
			l.rev = rev
			return err
		}
		if err != nil {
			return fmt.Errorf("learnersvc: read lease %s: %w", l.key, err)
		}
		if err := l.watch(ctx, run, e); err != nil {
			return err
		}
		if rev, err := l.kv.Update(ctx, l.key, val, e.Revision()); err == nil {
			l.log.Warn("took over a lapsed learner lease", "run", run, "previous", string(e.Value()))
			l.rev = rev
			return nil
		} else if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return fmt.Errorf("learnersvc: take over lease %s: %w", l.key, err)
		}
	}
}

// watch watches the key, last seen as e, for its holder's TTL: a rewrite
// means a live holder (a *LeaseHeldError); none, a lapsed lease (nil: the
// caller takes it over). A key deleted meanwhile is free (nil: the
// caller's takeover fails, so it looks again).
func (l *Lease) watch(ctx context.Context, run string, e jetstream.KeyValueEntry) error {
	var h LeaseHolder
	ttl := l.ttl
	if json.Unmarshal(e.Value(), &h) == nil && h.TTLMillis > 0 {
		ttl = time.Duration(h.TTLMillis) * time.Millisecond
	}
	deadline := time.Now().Add(ttl)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(ttl / (2 * leaseBeats)):
		}
		now, err := l.kv.Get(ctx, l.key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			return nil
		case err != nil:
			return fmt.Errorf("learnersvc: read lease %s: %w", l.key, err)
		case now.Revision() != e.Revision():
			_ = json.Unmarshal(now.Value(), &h)
			return &LeaseHeldError{Run: run, Holder: h}
		}
	}
	return nil
}

// heartbeat rewrites the key every TTL/5 until ctx ends. A write refused
// because the key changed is a takeover — unless the key holds this
// lease's own last write, whose acknowledgement was lost — and closes lost.
// Other failures (the bus reconnecting) are retried at the next beat.
func (l *Lease) heartbeat(ctx context.Context) {
	defer close(l.done)
	tick := time.NewTicker(l.ttl / leaseBeats)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if !l.renew(ctx) {
			close(l.lost)
			return
		}
	}
}

// renew writes the lease once; it reports false when the lease is lost.
func (l *Lease) renew(ctx context.Context) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.holder.Renewed = time.Now().UTC()
	val, _ := json.Marshal(l.holder)
	rev, err := l.kv.Update(ctx, l.key, val, l.rev)
	if err == nil {
		if l.failing {
			l.log.Info("learner lease renewed again", "key", l.key)
		}
		l.rev, l.failing = rev, false
		return true
	}
	if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		if !l.failing { // once per outage: the bus may be down for a while
			l.log.Warn("learner lease not renewed; retrying every beat", "key", l.key, "err", err)
		}
		l.failing = true
		return true
	}
	e, gerr := l.kv.Get(ctx, l.key)
	var h LeaseHolder
	if gerr == nil && json.Unmarshal(e.Value(), &h) == nil && h.Token == l.holder.Token {
		l.rev = e.Revision() // our own write, its acknowledgement lost
		return true
	}
	if gerr != nil && !errors.Is(gerr, jetstream.ErrKeyNotFound) {
		return true // cannot tell yet: look again at the next beat
	}
	l.log.Error("learner lease taken over by another learner", "key", l.key, "now", string(valueOf(e)))
	return false
}

func valueOf(e jetstream.KeyValueEntry) []byte {
	if e == nil {
		return nil
	}
	return e.Value()
}

// Holder returns who holds the lease: this process.
func (l *Lease) Holder() LeaseHolder {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.holder
}

// Lost is closed when another learner took the lease over.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// Release stops the heartbeat and deletes the key, if it still holds this
// lease, so the run's next learner starts at once.
func (l *Lease) Release(ctx context.Context) error {
	l.stop()
	<-l.done
	select {
	case <-l.lost:
		return nil
	default:
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.kv.Delete(ctx, l.key, jetstream.LastRevision(l.rev))
	if err != nil && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) && !isWrongLastSeq(err) {
		return fmt.Errorf("learnersvc: release lease %s: %w", l.key, err)
	}
	return nil
}

// isWrongLastSeq reports a refused compare-and-swap of a delete, which
// the client does not map to ErrKeyRevisionMismatch.
func isWrongLastSeq(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}
