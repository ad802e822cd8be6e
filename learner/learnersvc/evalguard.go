package learnersvc

import (
	"fmt"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
)

// Eval is the nonce of the evaluation shard whose message id is shardID
// (streams.EvalShardID): the same every time the learner queues the
// shard (a restarted learner's copy is deduplicated, and a result stored
// before the restart still answers it), and nobody without the run's key
// can tell it from the shard's other fields, so a result that echoes it
// comes from whoever took the shard from the work queue.
func (k NonceKey) Eval(shardID string) string {
	return k.derive("eval\x00" + shardID)
}

// evalLimits are what an episode of the run's environment can score: at
// most its step limit in steps, and in an environment of binary outcomes
// a score of 1 exactly when it succeeded.
type evalLimits struct {
	maxSteps int
	binary   bool
}

// evalLimitsOf returns env's limits (policy.DefaultMaxSteps for an
// environment without a step limit of its own).
func evalLimitsOf(env envs.Env) evalLimits {
	l := evalLimits{maxSteps: policy.DefaultMaxSteps}
	if sl, ok := env.(envs.StepLimiter); ok && sl.MaxSteps() > 0 {
		l.maxSteps = sl.MaxSteps()
	}
	if b, ok := env.(envs.BinaryOutcome); ok {
		l.binary = b.BinaryOutcome()
	}
	return l
}

// check refuses figures no episode of the environment can have.
// (Scores outside [0, 1] and more inadmissible actions than steps do not
// decode: schemas.EvalResult.Validate.)
func (l evalLimits) check(r schemas.EvalResult) error {
	for i, e := range r.Results {
		switch {
		case e.Steps > l.maxSteps:
			return fmt.Errorf("results[%d]: %d steps, but an episode of the environment ends after %d", i, e.Steps, l.maxSteps)
		case l.binary && e.Success != (e.Score == 1):
			return fmt.Errorf("results[%d]: success %v with score %v, but the environment scores 1 for a success and 0 otherwise", i, e.Success, e.Score)
		}
	}
	return nil
}
