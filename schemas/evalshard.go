package schemas

import (
	"fmt"
)

// Size limits of evaluation shards and their results: a shard lists its
// episodes' tasks and its result one entry per episode, so a shard of
// MaxEvalShardEpisodes episodes stays well under a NATS server's default
// 1 MiB payload.
const (
	// MaxEvalShardEpisodes is the most episodes one evaluation shard plays.
	MaxEvalShardEpisodes = 2048
	// MaxEvalEpisodes is the most episodes of one evaluation (a split at
	// one update), over all its shards.
	MaxEvalEpisodes = 1 << 20
	// MaxEvalNameBytes bounds a split name, a task type and an evaluator's
	// name in evaluation messages.
	MaxEvalNameBytes = 256
)

// EvalShard is one work item of an evaluation: play episodes
// [EpisodeStart, EpisodeEnd) of the evaluation of policy version
// PolicyVersion on split Split at learner update Update. Episode i plays
// Tasks[i−EpisodeStart] with the random stream (Seed, i) and the agent's
// greedy choice when Greedy, as rollout.EvaluateEpisodes does, so the
// shard's results are exactly those the learner's in-process evaluation
// would give its episodes. The learner queues an evaluation's shards on
// rspo.<run>.work.eval; actors share them as a work queue and answer each
// with an EvalResult. It travels as JSON.
type EvalShard struct {
	Run string `json:"run"`
	// Update is the learner's update counter at the evaluation and
	// PolicyVersion the π_θ version evaluated.
	Update        int64 `json:"update"`
	PolicyVersion int64 `json:"policy_version"`
	// Split is the eval split ("in_distribution", "train", ...).
	Split string `json:"split"`
	// Shard is this item's index among the evaluation's Shards items.
	Shard  int `json:"shard"`
	Shards int `json:"shards"`
	// EpisodeStart and EpisodeEnd are the episodes of the evaluation the
	// shard plays (EvalShardEpisodes); EpisodeEnd is exclusive. Episodes
	// is the evaluation's number of episodes, over all shards.
	EpisodeStart int `json:"episode_start"`
	EpisodeEnd   int `json:"episode_end"`
	Episodes     int `json:"episodes"`
	// Tasks are the tasks of the shard's episodes, in episode order.
	Tasks []TaskRef `json:"tasks"`
	// Seed is the evaluation's seed; Greedy says whether the agent acts
	// greedily (the learner's EvalGreedy).
	Seed   int64 `json:"seed"`
	Greedy bool  `json:"greedy,omitempty"`
	// Env is the environment name and EnvOptions its options.
	Env        string            `json:"env"`
	EnvOptions map[string]string `json:"env_options,omitempty"`
	// Nonce is a value the learner chose for this shard and nobody else
	// can guess (derived from the run's nonce key); the result must echo
	// it, so only whoever took the shard from the work queue can answer
	// it. At most MaxNonceBytes of [0-9a-z]; empty in shards of learners
	// before nonces.
	Nonce string `json:"nonce,omitempty"`
}

// EvalShardEpisodes returns the episodes [lo, hi) of shard k of an
// evaluation of n episodes split into shards shards: contiguous ranges, in
// order, whose sizes differ by at most one (CyclePlan.ShardTasks's rule).
func EvalShardEpisodes(n, shards, k int) (lo, hi int) {
	return k * n / shards, (k + 1) * n / shards
}

// EvalShardsOf splits the evaluation of tasks (one episode each, in order)
// into shards items; job holds every field but the shard's own (Shard,
// Shards, the episode range, Episodes and Tasks).
func EvalShardsOf(job EvalShard, tasks []TaskRef, shards int) []EvalShard {
	out := make([]EvalShard, shards)
	for k := range out {
		lo, hi := EvalShardEpisodes(len(tasks), shards, k)
		s := job
		s.Shard, s.Shards, s.EpisodeStart, s.EpisodeEnd, s.Episodes = k, shards, lo, hi, len(tasks)
		s.Tasks = tasks[lo:hi:hi]
		out[k] = s
	}
	return out
}

// Validate reports whether the shard is well formed: a non-empty episode
// range of at most MaxEvalShardEpisodes episodes that is the range
// EvalShardEpisodes gives its index, with one task per episode.
func (s EvalShard) Validate() error {
	if err := CheckRunName(s.Run); err != nil {
		return err
	}
	if err := checkEvalPlace(s.Update, s.PolicyVersion, s.Split, s.Shard, s.Shards, s.EpisodeStart, s.EpisodeEnd, s.Episodes); err != nil {
		return err
	}
	if err := CheckNonce("nonce", s.Nonce); err != nil {
		return err
	}
	switch {
	case s.Env == "":
		return &ValidationError{Field: "env", Reason: "empty"}
	case len(s.Tasks) != s.EpisodeEnd-s.EpisodeStart:
		return &ValidationError{Field: "tasks", Reason: fmt.Sprintf("%d tasks for the %d episodes [%d, %d)", len(s.Tasks), s.EpisodeEnd-s.EpisodeStart, s.EpisodeStart, s.EpisodeEnd)}
	}
	for i, t := range s.Tasks {
		if t.ID == "" {
			return &ValidationError{Field: fmt.Sprintf("tasks[%d].id", i), Reason: "empty"}
		}
		if err := checkEvalName(fmt.Sprintf("tasks[%d].type", i), t.Type); err != nil {
			return err
		}
	}
	return nil
}

// checkEvalPlace checks the fields that place a shard or its result in an
// evaluation.
func checkEvalPlace(update, version int64, split string, shard, shards, lo, hi, episodes int) error {
	switch {
	case update < 0 || version < 0:
		return &ValidationError{Field: "update/policy_version", Reason: "negative"}
	case episodes < 1 || episodes > MaxEvalEpisodes:
		return &ValidationError{Field: "episodes", Reason: fmt.Sprintf("%d not in 1..%d", episodes, MaxEvalEpisodes)}
	case shards < 1 || shards > episodes:
		return &ValidationError{Field: "shards", Reason: fmt.Sprintf("%d not in 1..%d (the evaluation's episodes)", shards, episodes)}
	case shard < 0 || shard >= shards:
		return &ValidationError{Field: "shard", Reason: fmt.Sprintf("%d not in 0..%d", shard, shards-1)}
	}
	if wlo, whi := EvalShardEpisodes(episodes, shards, shard); lo != wlo || hi != whi {
		return &ValidationError{Field: "episode_start/episode_end", Reason: fmt.Sprintf("[%d, %d), but shard %d of %d of %d episodes is [%d, %d)", lo, hi, shard, shards, episodes, wlo, whi)}
	}
	if hi-lo > MaxEvalShardEpisodes {
		return &ValidationError{Field: "episode_start/episode_end", Reason: fmt.Sprintf("%d episodes, at most %d a shard", hi-lo, MaxEvalShardEpisodes)}
	}
	return checkEvalName("split", split)
}

// checkEvalName checks a split, task type or evaluator name: non-empty
// and at most MaxEvalNameBytes.
func checkEvalName(field, name string) error {
	switch {
	case name == "":
		return &ValidationError{Field: field, Reason: "empty"}
	case len(name) > MaxEvalNameBytes:
		return &ValidationError{Field: field, Reason: fmt.Sprintf("%d bytes, at most %d", len(name), MaxEvalNameBytes)}
	}
	return nil
}

// EncodeEvalShard returns the JSON wire form of s after validating it.
func EncodeEvalShard(s EvalShard) ([]byte, error) { return encodeValidated(s) }

// DecodeEvalShard parses and validates an evaluation shard.
func DecodeEvalShard(b []byte) (EvalShard, error) {
	s, err := decodeValidated[EvalShard](b, "eval shard")
	if err != nil {
		return EvalShard{}, err
	}
	if len(s.EnvOptions) == 0 {
		s.EnvOptions = nil // as the encoder writes none
	}
	return s, nil
}
