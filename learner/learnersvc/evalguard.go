package learnersvc

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// evalKeyBytes is the size of the secret (Checkpoint.EvalKey) the learner
// derives its evaluation shards' nonces from.
const evalKeyBytes = 32

// ensureEvalKey gives the run a secret for its evaluation shards' nonces
// if its checkpoint has none (a new run, or one checkpointed before
// nonces) and saves the checkpoint at once: a shard queued with a nonce
// of a key the checkpoint lost could never be answered.
func (s *Service) ensureEvalKey(ctx context.Context, save bool) error {
	if len(s.cp.EvalKey) == evalKeyBytes {
		return nil
	}
	key := make([]byte, evalKeyBytes)
	if _, err := rand.Read(key); err != nil {
		return fmt.Errorf("learnersvc: evaluation key: %w", err)
	}
	s.cp.EvalKey = key
	if !save {
		return nil
	}
	return saveCheckpoint(ctx, s.js, s.cfg.Run, s.cp)
}

// evalNonce is shard sh's nonce: 128 bits of the HMAC-SHA256 of its
// message id under key, in hex. It is the same every time the learner
// queues the shard (a restarted learner's copy is deduplicated, and a
// result stored before the restart still answers it) and nobody without
// the key, which only the learner's checkpoint holds, can tell it from
// the shard's other fields: a result that echoes it comes from whoever
// took the shard from the work queue.
func evalNonce(key []byte, sh schemas.EvalShard) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(streams.EvalShardID(sh)))
	return hex.EncodeToString(mac.Sum(nil)[:16])
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
