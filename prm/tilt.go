package prm

import (
	"context"
	"fmt"
	"sync"
)

// TiltScorer scores the actions of a tilted rollout
// (policy.RolloutOptions.Tilt) with a model, under the context of the
// rollouts it serves, and keeps the featurizer's failures, which the
// error-less ScoreActions of an action scorer cannot return.
//
// A state whose actions cannot be featurized scores NaN, which the tilt
// leaves untilted: that step follows the untilted policy. After the first
// failure the scorer stops asking the featurizer (every later state scores
// NaN at once), since the rollouts are no longer the tilted ones asked for;
// the caller checks Err once they finish and discards them when it is not
// nil. A TiltScorer lives as long as one batch of rollouts and is safe for
// concurrent use.
type TiltScorer struct {
	ctx context.Context // the rollouts' context, for the featurizer's requests
	m   *Model

	mu     sync.Mutex
	err    error
	failed int
}

// NewTiltScorer returns a scorer of m's action values for rollouts that
// run under ctx.
func NewTiltScorer(ctx context.Context, m *Model) *TiltScorer {
	return &TiltScorer{ctx: ctx, m: m}
}

// ScoreActions implements policy.ActionScorer.
func (s *TiltScorer) ScoreActions(instruction, observation string, actions []string, dst []float64) {
	s.mu.Lock()
	failedBefore := s.err != nil
	s.mu.Unlock()
	if !failedBefore {
		err := s.m.ScoreActionsContext(s.ctx, instruction, observation, actions, dst)
		if err == nil {
			return
		}
		s.mu.Lock()
		if s.err == nil {
			s.err = err
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	s.failed++
	s.mu.Unlock()
	fillNaN(dst[:len(actions)])
}

// Err returns nil when every state was scored, else an error wrapping the
// first failure (ErrFeaturizer, or the context's error) and counting the
// states that went untilted.
func (s *TiltScorer) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		return nil
	}
	return fmt.Errorf("prm: %d tilted states were not scored (they followed the untilted policy): %w", s.failed, s.err)
}
