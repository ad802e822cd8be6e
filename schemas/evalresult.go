package schemas

import (
	"fmt"
)

// EvalResult answers an EvalShard: what each of the shard's episodes
// scored, in episode order. An actor publishes it on
// rspo.<run>.eval.<update> once it has played the shard; the learner
// folds the results of an evaluation's shards, in episode order, into the
// same report its in-process evaluation gives. It travels as JSON.
type EvalResult struct {
	Run string `json:"run"`
	// Update, PolicyVersion, Split, Shard, Shards, EpisodeStart,
	// EpisodeEnd and Episodes repeat the shard's (EvalShard).
	Update        int64  `json:"update"`
	PolicyVersion int64  `json:"policy_version"`
	Split         string `json:"split"`
	Shard         int    `json:"shard"`
	Shards        int    `json:"shards"`
	EpisodeStart  int    `json:"episode_start"`
	EpisodeEnd    int    `json:"episode_end"`
	Episodes      int    `json:"episodes"`
	// Evaluator names who played the shard (the actor's name).
	Evaluator string `json:"evaluator"`
	// Nonce echoes the shard's: the proof that the result comes from
	// whoever took the shard from the work queue.
	Nonce string `json:"nonce,omitempty"`
	// Results holds one entry per episode of the shard, in episode order.
	Results []EvalEpisode `json:"results"`
}

// EvalEpisode is what one evaluation episode scored.
type EvalEpisode struct {
	// Type is the episode's task type.
	Type string `json:"type"`
	// Success says whether the task was completed; Score is the graded
	// score (envs.Score: the outcome reward, or the environment's own
	// grade), in [0, 1].
	Success bool    `json:"success"`
	Score   float64 `json:"score"`
	// Steps is the number of actions taken, Inadmissible how many of them
	// were not admissible.
	Steps        int `json:"steps"`
	Inadmissible int `json:"inadmissible"`
}

// Validate reports whether the result is well formed: placed as a shard
// is (EvalShard.Validate), one entry per episode of its range, each with
// a task type, a score in [0, 1] and 0 ≤ inadmissible ≤ steps ≤
// MaxSteps. Whether it answers a given shard is Answers's question.
func (r EvalResult) Validate() error {
	if err := CheckRunName(r.Run); err != nil {
		return err
	}
	if err := checkEvalPlace(r.Update, r.PolicyVersion, r.Split, r.Shard, r.Shards, r.EpisodeStart, r.EpisodeEnd, r.Episodes); err != nil {
		return err
	}
	if err := checkEvalName("evaluator", r.Evaluator); err != nil {
		return err
	}
	if err := CheckNonce("nonce", r.Nonce); err != nil {
		return err
	}
	if n := r.EpisodeEnd - r.EpisodeStart; len(r.Results) != n {
		return &ValidationError{Field: "results", Reason: fmt.Sprintf("%d results for the shard's %d episodes [%d, %d)", len(r.Results), n, r.EpisodeStart, r.EpisodeEnd)}
	}
	for i, e := range r.Results {
		field := fmt.Sprintf("results[%d]", i)
		if err := checkEvalName(field+".type", e.Type); err != nil {
			return err
		}
		switch {
		case !(e.Score >= 0 && e.Score <= 1):
			return &ValidationError{Field: field + ".score", Reason: fmt.Sprintf("%v not in [0, 1]", e.Score)}
		case e.Steps < 0 || e.Steps > MaxSteps:
			return &ValidationError{Field: field + ".steps", Reason: fmt.Sprintf("%d not in 0..%d", e.Steps, MaxSteps)}
		case e.Inadmissible < 0 || e.Inadmissible > e.Steps:
			return &ValidationError{Field: field + ".inadmissible", Reason: fmt.Sprintf("%d not in 0..%d (the episode's steps)", e.Inadmissible, e.Steps)}
		}
	}
	return nil
}

// Answers reports whether r answers shard s: the same run, update, policy
// version, split, shard and episode range, the shard's nonce, and each
// episode of the task type the shard gave it. An error says what differs
// (never what the nonce is).
func (r EvalResult) Answers(s EvalShard) error {
	mismatch := func(field string, got, want any) error {
		return &ValidationError{Field: field, Reason: fmt.Sprintf("%v, but the shard's is %v", got, want)}
	}
	switch {
	case r.Run != s.Run:
		return mismatch("run", r.Run, s.Run)
	case r.Update != s.Update:
		return mismatch("update", r.Update, s.Update)
	case r.PolicyVersion != s.PolicyVersion:
		return mismatch("policy_version", r.PolicyVersion, s.PolicyVersion)
	case r.Split != s.Split:
		return mismatch("split", r.Split, s.Split)
	case r.Shards != s.Shards || r.Shard != s.Shard:
		return mismatch("shard", fmt.Sprintf("%d of %d", r.Shard, r.Shards), fmt.Sprintf("%d of %d", s.Shard, s.Shards))
	case r.EpisodeStart != s.EpisodeStart || r.EpisodeEnd != s.EpisodeEnd || r.Episodes != s.Episodes:
		return mismatch("episodes", fmt.Sprintf("[%d, %d) of %d", r.EpisodeStart, r.EpisodeEnd, r.Episodes),
			fmt.Sprintf("[%d, %d) of %d", s.EpisodeStart, s.EpisodeEnd, s.Episodes))
	case len(r.Results) != len(s.Tasks):
		return mismatch("results", fmt.Sprintf("%d entries", len(r.Results)), fmt.Sprintf("%d episodes", len(s.Tasks)))
	}
	for i, e := range r.Results {
		if e.Type != s.Tasks[i].Type {
			return mismatch(fmt.Sprintf("results[%d].type", i), e.Type, s.Tasks[i].Type)
		}
	}
	if r.Nonce != s.Nonce {
		return &ValidationError{Field: "nonce", Reason: "not the shard's: the result does not come from whoever took the shard"}
	}
	return nil
}

// EncodeEvalResult returns the JSON wire form of r after validating it.
func EncodeEvalResult(r EvalResult) ([]byte, error) { return encodeValidated(r) }

// DecodeEvalResult parses and validates an evaluation result.
func DecodeEvalResult(b []byte) (EvalResult, error) {
	r, err := decodeValidated[EvalResult](b, "eval result")
	if err != nil {
		return EvalResult{}, err
	}
	return r, nil
}
