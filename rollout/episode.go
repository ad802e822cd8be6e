package rollout

import (
	"context"
	"errors"
	"sync"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
)

// Episode is one rollout to play: the task and the per-episode options
// (seed, id, provenance).
type Episode struct {
	Task envs.Task
	Opts policy.RolloutOptions
}

// All plays every episode with pl on env, parallel at once, and
// returns the trajectories in the order of eps. With the built-in policy
// each episode is fully determined by its options, so the result does not
// depend on scheduling. Once ctx ends no episode is started (those in play
// stop at their next step) and All returns ctx's error: a stopping service
// does not start the rest of a large batch only to have each one refuse.
func All(ctx context.Context, env envs.Env, pl Player, eps []Episode, parallel int) ([]*schemas.Trajectory, error) {
	out := make([]*schemas.Trajectory, len(eps))
	errs := make([]error, len(eps))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < max(1, min(parallel, len(eps))); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range jobs {
				out[k], errs[k] = pl.Play(ctx, env, eps[k])
			}
		}()
	}
dispatch:
	for k := range eps {
		if ctx.Err() != nil {
			break
		}
		select {
		case jobs <- k:
		case <-ctx.Done():
			break dispatch
		}
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return out, err
	}
	return out, errors.Join(errs...)
}

// EnvSteps counts the environment steps of trajectories.
func EnvSteps(ts []*schemas.Trajectory) int64 {
	var n int64
	for _, t := range ts {
		n += int64(len(t.Steps))
	}
	return n
}
