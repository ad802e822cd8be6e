package schemas

import "slices"

// StateStats counts the states the steps visited: distinct is the number of
// different StateKeys, repeated the number of steps whose state had already
// been visited earlier in the trajectory (so distinct + repeated =
// len(steps)). They are the buffer's priority keys DistinctStates and
// RepeatedVisits.
func StateStats(steps []Step) (distinct, repeated int32) {
	if len(steps) == 0 {
		return 0, 0
	}
	keys := make([]uint64, len(steps))
	for i := range steps {
		keys[i] = steps[i].StateKey
	}
	slices.Sort(keys)
	distinct = int32(len(slices.Compact(keys)))
	return distinct, int32(len(steps)) - distinct
}
