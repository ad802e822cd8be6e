package rollout

import (
	"fmt"
	"hash/fnv"

	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
)

// RequestTrajectoryID is the id of the j-th episode of the i-th task of a
// rollout request. The learner computes the same ids to know which
// trajectories answer its request. The request's nonce is part of the id
// (schemas.WithNonce), not of the episode's seed (RequestEpisodes).
func RequestTrajectoryID(req schemas.RolloutRequest, taskIndex, episode int) string {
	return schemas.WithNonce(schemas.TrajectoryID(req.Run, req.Source, req.ID, RequestSeq(req, taskIndex, episode)), req.Nonce)
}

// RequestSeq numbers the episodes of a request: task-major.
func RequestSeq(req schemas.RolloutRequest, taskIndex, episode int) uint64 {
	return uint64(taskIndex*req.GroupSize + episode)
}

// RequestGroupID groups the episodes of one task of one request (GRPO groups).
func RequestGroupID(req schemas.RolloutRequest, task schemas.TaskRef) string {
	return req.ID + "/" + task.ID
}

// RequestEpisodes lists a rollout request's episodes, task-major, with
// their deterministic ids and seeds: whoever plays them (an actor, or
// another actor after a crash) produces the same trajectories. producer
// names the player in the trajectories' provenance.
func RequestEpisodes(req schemas.RolloutRequest, producer string) []Episode {
	eps := make([]Episode, 0, len(req.Tasks)*req.GroupSize)
	for i, ref := range req.Tasks {
		for j := 0; j < req.GroupSize; j++ {
			eps = append(eps, Episode{Task: TaskOf(ref), Opts: policy.RolloutOptions{
				Seed:        EpisodeSeed(req.Seed, req.ID, i, j),
				Temperature: req.Temperature,
				ID:          RequestTrajectoryID(req, i, j),
				Source:      req.Source,
				Run:         req.Run,
				Producer:    producer,
				GroupID:     RequestGroupID(req, ref),
				Cycle:       req.Cycle,
				Seq:         RequestSeq(req, i, j),
			}})
		}
	}
	return eps
}

// EpisodeSeed derives the sampling seed of one episode from a base seed and
// the episode's coordinates, so that every episode of a run samples
// independently yet reproducibly.
func EpisodeSeed(base int64, parts ...any) int64 {
	h := fnv.New64a()
	fmt.Fprint(h, base)
	for _, p := range parts {
		fmt.Fprintf(h, "\x00%v", p)
	}
	return int64(h.Sum64() >> 1)
}
