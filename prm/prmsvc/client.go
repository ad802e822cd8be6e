package prmsvc

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// Client scores trajectories through a remote PRM service.
type Client struct {
	nc      *nats.Conn
	subject string
}

// NewClient returns a client of run's PRM service.
func NewClient(nc *nats.Conn, run string) (*Client, error) {
	if err := streams.ValidateRun(run); err != nil {
		return nil, err
	}
	return &Client{nc: nc, subject: streams.Subjects(run).PRMScore}, nil
}

// Score sends trajs in one request and returns the reply. Errors: a
// schemas validation error if trajs do not encode, a *ServiceError
// (ErrBadRequest, ErrServer) for an error reply, or the transport's error
// (e.g. nats.ErrNoResponders, ctx's deadline).
func (c *Client) Score(ctx context.Context, trajs []*schemas.Trajectory) (ScoreReply, error) {
	b, err := schemas.EncodeTrajectoryBatch(trajs)
	if err != nil {
		return ScoreReply{}, err
	}
	return c.ScoreRaw(ctx, b)
}

// ScoreRaw sends an already encoded request.
func (c *Client) ScoreRaw(ctx context.Context, request []byte) (ScoreReply, error) {
	msg, err := c.nc.RequestWithContext(ctx, c.subject, request)
	if err != nil {
		return ScoreReply{}, fmt.Errorf("prmsvc: request %s: %w", c.subject, err)
	}
	if code := msg.Header.Get(micro.ErrorCodeHeader); code != "" {
		return ScoreReply{}, &ServiceError{Code: code, Description: msg.Header.Get(micro.ErrorHeader)}
	}
	return DecodeScoreReply(msg.Data)
}

// DecodeScoreReply parses a score reply and checks it: one total per
// trajectory's scores, each the sum of its scores. Errors wrap ErrServer.
func DecodeScoreReply(b []byte) (ScoreReply, error) {
	var reply ScoreReply
	if err := json.Unmarshal(b, &reply); err != nil {
		return ScoreReply{}, fmt.Errorf("%w: undecodable reply: %v", ErrServer, err)
	}
	if len(reply.Scores) != len(reply.Totals) || reply.PRMVersion < 0 {
		return ScoreReply{}, fmt.Errorf("%w: %d score lists with %d totals (version %d)", ErrServer, len(reply.Scores), len(reply.Totals), reply.PRMVersion)
	}
	for k, steps := range reply.Scores {
		var sum float64
		for _, v := range steps {
			sum += v
		}
		if d := sum - reply.Totals[k]; !(d <= 1e-6*(1+math.Abs(sum)) && -d <= 1e-6*(1+math.Abs(sum))) {
			return ScoreReply{}, fmt.Errorf("%w: trajectory %d's total %v is not the sum %v of its scores", ErrServer, k, reply.Totals[k], sum)
		}
	}
	return reply, nil
}
