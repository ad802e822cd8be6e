package rollout_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
)

// stopAfter is a player that cancels its context at its n-th episode and
// counts the episodes it was asked to play.
type stopAfter struct {
	n      int64
	cancel context.CancelFunc
	played atomic.Int64
}

func (p *stopAfter) Play(ctx context.Context, _ envs.Env, ep rollout.Episode) (*schemas.Trajectory, error) {
	if p.played.Add(1) == p.n {
		p.cancel()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &schemas.Trajectory{ID: ep.Opts.ID}, nil
}

// All used to hand every episode of a batch to its players after its
// context had ended, each refusing at once: an explorer given a plan of
// millions of episodes went on starting them long after SIGTERM. It stops
// starting episodes once the context ends.
func TestAllStartsNoEpisodeAfterItsContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const parallel = 2
	pl := &stopAfter{n: 3, cancel: cancel}
	eps := make([]rollout.Episode, 10_000)
	_, err := rollout.All(ctx, nil, pl, eps, parallel)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("All after its context ended: %v, want context.Canceled", err)
	}
	// The episodes in play when the context ended, and at most one the
	// dispatcher handed over as it ended, may still be asked for.
	if got := pl.played.Load(); got > pl.n+parallel+1 {
		t.Errorf("%d episodes started, want at most %d once the context ended at episode %d", got, pl.n+parallel+1, pl.n)
	}
}
