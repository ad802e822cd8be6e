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

// DefaultTimeout bounds a Client call whose context has no deadline.
const DefaultTimeout = 30 * time.Second

// Client is the learner's side of the buffer service of one run. It is safe
// for concurrent use.
type Client struct {
	nc  *nats.Conn
	sub streams.RunSubjects
}

// NewClient returns a client for run's buffer. It returns an error wrapping
// streams.ErrInvalidName for a run that cannot be a subject token.
func NewClient(nc *nats.Conn, run string) (*Client, error) {
	if err := streams.ValidateRun(run); err != nil {
		return nil, err
	}
	return &Client{nc: nc, sub: streams.Subjects(run)}, nil
}

// Sample asks the buffer for records in priority order (see SampleRequest)
// and returns them decoded, reassembling a reply that came in parts.
//
// Errors: ErrBadRequest for an invalid request (checked before sending, or
// reported by the service), ErrNoResponders when no buffer serves the run,
// ErrInternal when the service failed, ErrBadReply for a reply that does not
// reassemble or decode, and ctx's error (or a timeout after DefaultTimeout)
// when no complete reply arrives in time.
func (c *Client) Sample(ctx context.Context, req SampleRequest) ([]*schemas.Trajectory, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	data, records, err := c.request(ctx, body)
	if err != nil {
		return nil, err
	}
	ts, err := schemas.DecodeTrajectoryBatch(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadReply, err)
	}
	if len(ts) != records {
		return nil, fmt.Errorf("%w: %d records decoded, the reply announced %d", ErrBadReply, len(ts), records)
	}
	return ts, nil
}

// request sends body to the sample endpoint and collects the reply's parts.
func (c *Client) request(ctx context.Context, body []byte) ([]byte, int, error) {
	inbox := c.nc.NewInbox()
	sub, err := c.nc.SubscribeSync(inbox)
	if err != nil {
		return nil, 0, fmt.Errorf("buffersvc: subscribe to reply inbox: %w", err)
	}
	defer sub.Unsubscribe()
	if err := c.nc.PublishMsg(&nats.Msg{Subject: c.sub.BufferSample, Reply: inbox, Data: body}); err != nil {
		return nil, 0, fmt.Errorf("buffersvc: send sample request: %w", err)
	}
	var a assembler
	for {
		msg, err := sub.NextMsgWithContext(ctx)
		if errors.Is(err, nats.ErrNoResponders) {
			return nil, 0, fmt.Errorf("%w %s", ErrNoResponders, c.sub.Run)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("buffersvc: waiting for sample reply: %w", err)
		}
		if err := c.replyError(msg); err != nil {
			return nil, 0, err
		}
		done, err := a.add(msg)
		if err != nil {
			return nil, 0, err
		}
		if done {
			return a.bytes(), a.records, nil
		}
	}
}

// Stats returns the buffer's statistics. Errors as for Sample.
func (c *Client) Stats(ctx context.Context) (Stats, error) {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
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
	var st Stats
	if err := json.Unmarshal(msg.Data, &st); err != nil {
		return Stats{}, fmt.Errorf("%w: stats: %v", ErrBadReply, err)
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

func withDefaultTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, DefaultTimeout)
}
