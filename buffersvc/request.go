package buffersvc

import (
	"errors"
	"fmt"

	"github.com/rspo-dev/rspo/schemas"
)

// MaxSampleCount bounds the number of records one sample request may ask for.
const MaxSampleCount = schemas.MaxBatchTrajectories

// MaxPreferTasks bounds SampleRequest.PreferTasks: a learner prefers the
// tasks of one update, at most schemas.MaxRolloutTasks.
const MaxPreferTasks = schemas.MaxRolloutTasks

// MaxSampleRequestBytes bounds the encoded sample request (a NATS server's
// default max payload): a learner's request is a few KB.
const MaxSampleRequestBytes = 1 << 20

// SampleRequest is the learner's request for off-policy records. It travels
// as JSON on rspo.<run>.buffer.sample.
//
// The reply lists up to Count records of Cycle in priority order: records of
// PreferTasks first, then the others; within each class higher outcome reward
// first, then more distinct states, then fewer repeated visits, then a random
// order among exact ties drawn from Seed. The same request against the same
// buffer gives the same reply (unless a sample cap changed what is left).
type SampleRequest struct {
	// Cycle is the RSPO cycle whose records to sample.
	Cycle int64 `json:"cycle"`
	// PreferTasks lists task ids whose records rank before all others
	// (typically the tasks of the learner's on-policy batch, so that
	// buffer records are normalised with their own task's group).
	PreferTasks []string `json:"prefer_tasks,omitempty"`
	// Count is how many records to return, 1..MaxSampleCount. Fewer come
	// back when the cycle holds fewer sampleable records.
	Count int `json:"count"`
	// Seed orders exact ties.
	Seed int64 `json:"seed"`
}

// Validate reports every problem with the request, each wrapping ErrBadRequest.
func (r SampleRequest) Validate() error {
	var errs []error
	if r.Cycle < 0 {
		errs = append(errs, fmt.Errorf("%w: cycle %d is negative", ErrBadRequest, r.Cycle))
	}
	if r.Count < 1 || r.Count > MaxSampleCount {
		errs = append(errs, fmt.Errorf("%w: count %d not in 1..%d", ErrBadRequest, r.Count, MaxSampleCount))
	}
	if len(r.PreferTasks) > MaxPreferTasks {
		errs = append(errs, fmt.Errorf("%w: %d preferred tasks, at most %d", ErrBadRequest, len(r.PreferTasks), MaxPreferTasks))
		return errors.Join(errs...) // the ids are not looked at one by one
	}
	for _, t := range r.PreferTasks {
		if len(t) > maxTaskIDLen {
			errs = append(errs, fmt.Errorf("%w: preferred task id of %d bytes, at most %d", ErrBadRequest, len(t), maxTaskIDLen))
		}
	}
	return errors.Join(errs...)
}
