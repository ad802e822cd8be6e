package producers

import (
	"fmt"
	"hash/fnv"

	"github.com/rspo-dev/rspo/schemas"
)

// RolloutTrajectoryID is the id of the j-th episode of the i-th task of a
// rollout request. The learner computes the same ids to know which
// trajectories answer its request.
func RolloutTrajectoryID(req schemas.RolloutRequest, taskIndex, episode int) string {
	return schemas.TrajectoryID(req.Run, req.Source, req.ID, RolloutSeq(req, taskIndex, episode))
}

// RolloutSeq numbers the episodes of a request: task-major.
func RolloutSeq(req schemas.RolloutRequest, taskIndex, episode int) uint64 {
	return uint64(taskIndex*req.GroupSize + episode)
}

// RolloutGroupID groups the episodes of one task of one request (GRPO groups).
func RolloutGroupID(req schemas.RolloutRequest, task schemas.TaskRef) string {
	return req.ID + "/" + task.ID
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
