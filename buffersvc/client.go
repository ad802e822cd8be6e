package buffersvc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// DefaultTimeout bounds one attempt of a Client call, whatever the
// caller's context allows: a buffer that dies mid-request, or a bus
// restart that loses the request or its reply, costs one timeout, not the
// caller's whole deadline. Every call answers in milliseconds when the
// buffer lives (BenchmarkSampleUnderIngest: p99 0.11 s while ingesting, on
// a 2-core machine), so 10 s is generous; at 30 s each lost request
// held the learner for 30 s, and two of them in a row (a buffer killed,
// then the bus) stalled a chaos run past its timeout.
const DefaultTimeout = 10 * time.Second

// DefaultRetryFor is how long a Client call retries while no buffer
// answers (a buffer restarting, the bus reconnecting) before it gives up.
const DefaultRetryFor = 2 * time.Minute

// Client is the learner's side of the buffer service of one run. It is safe
// for concurrent use.
type Client struct {
	nc  *nats.Conn
	sub streams.RunSubjects
	// timeout bounds one attempt; retryFor all attempts of a call.
	timeout, retryFor time.Duration
	// observe, if set, is told how long every Sample call took.
	observe func(time.Duration, error)
}

// NewClient returns a client for run's buffer. It returns an error wrapping
// streams.ErrInvalidName for a run that cannot be a subject token.
func NewClient(nc *nats.Conn, run string) (*Client, error) {
	if err := streams.ValidateRun(run); err != nil {
		return nil, err
	}
	return &Client{nc: nc, sub: streams.Subjects(run), timeout: DefaultTimeout, retryFor: DefaultRetryFor}, nil
}

// WithTimeouts returns a copy of c whose attempts last at most timeout and
// whose calls retry for at most retryFor (0: a single attempt).
func (c *Client) WithTimeouts(timeout, retryFor time.Duration) *Client {
	d := *c
	d.timeout, d.retryFor = timeout, retryFor
	return &d
}

// WithObserver returns a copy of c that calls observe after every Sample
// call with its duration (retries included) and its error.
func (c *Client) WithObserver(observe func(d time.Duration, err error)) *Client {
	d := *c
	d.observe = observe
	return &d
}

// retry runs attempt, each try bounded by the attempt timeout, until it
// succeeds, fails with an error no retry can fix, ctx ends, or retryFor has
// passed; between tries it backs off from 50 ms doubling to 2 s.
func (c *Client) retry(ctx context.Context, attempt func(context.Context) error) error {
	deadline := time.Now().Add(c.retryFor)
	wait := 50 * time.Millisecond
	for {
		actx, cancel := context.WithTimeout(ctx, c.timeout)
		err := attempt(actx)
		cancel()
		if err == nil || !transient(err) || ctx.Err() != nil || time.Now().Add(wait).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// transient reports whether a retry may fix err: nobody answering, an
// attempt timing out, a reply cut short by a dying buffer, a full queue. A bad request
// or an error the service reports is final.
func transient(err error) bool {
	var re *RemoteError
	switch {
	case errors.Is(err, ErrBusy): // the buffer's queue is full: it drains
		return true
	case errors.Is(err, ErrBadRequest), errors.As(err, &re):
		return false
	case errors.Is(err, ErrNoResponders), errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout),
		errors.Is(err, ErrBadReply), errors.Is(err, nats.ErrConnectionReconnecting), errors.Is(err, nats.ErrNoResponders):
		return true
	}
	return false
}

// Sample asks the buffer for records in priority order (see SampleRequest)
// and returns them decoded, reassembling a reply that came in parts.
//
// Errors: ErrBadRequest for an invalid request (checked before sending, or
// reported by the service), ErrNoResponders when no buffer serves the run,
// ErrInternal when the service failed, ErrBadReply for a reply that does not
// reassemble or decode, and ctx's error (or a timeout) when no complete
// reply arrives in time. Transient failures — no buffer answering, an
// attempt timing out after DefaultTimeout, a reply cut short — are retried
// with backoff for DefaultRetryFor (see WithTimeouts) before the last of
// them is returned.
func (c *Client) Sample(ctx context.Context, req SampleRequest) (_ []*schemas.Trajectory, err error) {
	if err = req.Validate(); err != nil {
		return nil, err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	if c.observe != nil {
		defer func(start time.Time) { c.observe(time.Since(start), err) }(time.Now())
	}
	var ts []*schemas.Trajectory
	err = c.retry(ctx, func(ctx context.Context) error {
		data, records, format, err := c.request(ctx, body)
		if err != nil {
			return err
		}
		if format == ReplyFormatRecords {
			ts, err = DecodeRecords(data, records)
			return err
		}
		if ts, err = schemas.DecodeTrajectoryBatch(data); err != nil { // an older buffer's reply
			return fmt.Errorf("%w: %w", ErrBadReply, err)
		}
		if len(ts) != records {
			return fmt.Errorf("%w: %d records decoded, the reply announced %d", ErrBadReply, len(ts), records)
		}
		return nil
	})
	return ts, err
}

// request sends body to the sample endpoint and collects the reply's parts;
// it returns the body, the records announced and the body's format.
func (c *Client) request(ctx context.Context, body []byte) ([]byte, int, string, error) {
	inbox := c.nc.NewInbox()
	sub, err := c.nc.SubscribeSync(inbox)
	if err != nil {
		return nil, 0, "", fmt.Errorf("buffersvc: subscribe to reply inbox: %w", err)
	}
	defer sub.Unsubscribe()
	if err := c.nc.PublishMsg(&nats.Msg{Subject: c.sub.BufferSample, Reply: inbox, Data: body}); err != nil {
		return nil, 0, "", fmt.Errorf("buffersvc: send sample request: %w", err)
	}
	var a assembler
	for {
		msg, err := sub.NextMsgWithContext(ctx)
		if errors.Is(err, nats.ErrNoResponders) {
			return nil, 0, "", fmt.Errorf("%w %s", ErrNoResponders, c.sub.Run)
		}
		if err != nil {
			return nil, 0, "", fmt.Errorf("buffersvc: waiting for sample reply: %w", err)
		}
		if err := c.replyError(msg); err != nil {
			return nil, 0, "", err
		}
		done, err := a.add(msg)
		if err != nil {
			return nil, 0, "", err
		}
		if done {
			return a.bytes(), a.records, msg.Header.Get(HeaderReplyFormat), nil
		}
	}
}

// Stats returns the buffer's statistics. Errors as for Sample.
func (c *Client) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	err := c.retry(ctx, func(ctx context.Context) (err error) {
		st, err = c.stats(ctx)
		return err
	})
	return st, err
}

func (c *Client) stats(ctx context.Context) (Stats, error) {
	msg, err := c.nc.RequestWithContext(ctx, c.sub.BufferStats, nil)
	if errors.Is(err, nats.ErrNoResponders) {
		return Stats{}, fmt.Errorf("%w %s", ErrNoResponders, c.sub.Run)
	}
	if err != nil {
		return Stats{}, fmt.Errorf("buffersvc: stats request: %w", err)
	}
	if err := c.replyError(msg); err != nil {
		return Stats{}, err
	}
	return DecodeStats(msg.Data)
}

// DecodeStats parses a stats reply and checks that it can describe a
// buffer: no negative count, fractions in [0, 1]. Errors wrap ErrBadReply.
func DecodeStats(b []byte) (Stats, error) {
	var st Stats
	if err := json.Unmarshal(b, &st); err != nil {
		return Stats{}, fmt.Errorf("%w: stats: %v", ErrBadReply, err)
	}
	bad := st.Records < 0 || st.Bytes < 0 || st.SamplesServed < 0 || !(st.SuccessFraction >= 0 && st.SuccessFraction <= 1)
	for _, c := range st.Cycles {
		bad = bad || c.Records < 0 || c.Bytes < 0 || c.Successes < 0 || !(c.SuccessFraction >= 0 && c.SuccessFraction <= 1)
	}
	if bad {
		return Stats{}, fmt.Errorf("%w: stats with a negative count or a fraction outside [0, 1]", ErrBadReply)
	}
	return st, nil
}

// noRespondersStatus is the status header value the server sends to a
// reply subject when nobody listens on the request subject.
const noRespondersStatus = "503"

// replyError returns the error a reply message carries, if any.
func (c *Client) replyError(msg *nats.Msg) error {
	if msg.Header == nil {
		return nil
	}
	if msg.Header.Get("Status") == noRespondersStatus && len(msg.Data) == 0 {
		return fmt.Errorf("%w %s", ErrNoResponders, c.sub.Run)
	}
	if code := msg.Header.Get(micro.ErrorCodeHeader); code != "" {
		return &RemoteError{Code: code, Description: msg.Header.Get(micro.ErrorHeader)}
	}
	return nil
}
