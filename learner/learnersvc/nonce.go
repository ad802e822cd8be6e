package learnersvc

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/streams"
)

// Nonces. A trajectory id that anyone can predict can be squatted:
// JetStream keeps the first message under a message id for its dedupe
// window and drops the later ones, so a record published under the id of
// a rollout the learner has not asked for yet (or of a cycle not started)
// replaces the genuine one. Detecting a same-id duplicate does not help:
// within the window the server drops the genuine publish before any
// consumer sees it — only its publisher hears of it (PubAck.Duplicate),
// and it cannot evict the first — and no consumer could tell which of two
// unsigned records is genuine anyway. So the learner makes the ids
// unguessable instead: every rollout request and cycle plan carries a
// nonce that the ids of its trajectories end with (schemas.WithNonce),
// derived from a key only the learner's credentials read.
//
// The seeds never see a nonce, so what an episode plays does not depend
// on it, and a request asked again under a fresh nonce (its trajectories
// refused) is played to the same episodes under new ids.

// nonceKeyName is the state key of a run's nonce key.
func nonceKeyName(run string) string { return streams.StateKey(run, "learner", "nonce-key") }

// nonceKeyBytes is the size of a run's nonce key.
const nonceKeyBytes = 32

// nonceBytes is the size of a derived nonce: 96 bits, 24 hex digits.
const nonceBytes = 12

// NonceKey is a run's secret from which its learner derives every nonce
// it gives out, as HMAC-SHA256 of what the nonce is for: a restarted
// learner gives each request and cycle the nonce it gave before (the ids
// its actors and explorers already used), and nobody without the key
// (rspo_state's <run>.learner.nonce-key, which only the learner's and the
// admin's credentials read) can name the next one. A nil key gives empty
// nonces: the predictable ids of a run begun before nonces.
type NonceKey []byte

// derive is the nonce of the given purpose.
func (k NonceKey) derive(purpose string) string {
	if len(k) == 0 {
		return ""
	}
	mac := hmac.New(sha256.New, k)
	mac.Write([]byte(purpose))
	return hex.EncodeToString(mac.Sum(nil)[:nonceBytes])
}

// Rollout is the nonce of rollout request id asked for the attempt-th
// time (0 for the first).
func (k NonceKey) Rollout(requestID string, attempt int) string {
	return k.derive("rollout\x00" + requestID + "\x00" + strconv.Itoa(attempt))
}

// Cycle is the nonce of the cycle's plan.
func (k NonceKey) Cycle(cycle int64) string {
	return k.derive("cycle\x00" + strconv.FormatInt(cycle, 10))
}

// LoadNonceKey reads run's nonce key; ok is false when the run has none.
func LoadNonceKey(ctx context.Context, js jetstream.JetStream, run string) (key NonceKey, ok bool, err error) {
	kv, err := streams.State(ctx, js)
	if err != nil {
		return nil, false, err
	}
	entry, err := kv.Get(ctx, nonceKeyName(run))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("learnersvc: read nonce key: %w", err)
	}
	if key, err = hex.DecodeString(string(entry.Value())); err != nil || len(key) != nonceKeyBytes {
		return nil, false, fmt.Errorf("learnersvc: nonce key of run %s is corrupt: want %d hex bytes", run, nonceKeyBytes)
	}
	return key, true, nil
}

// nonceKey returns the run's nonce key. A new run (no checkpoint) creates
// one unless a start that did not reach its first checkpoint already did;
// a resumed run without one was begun before nonces and keeps its
// predictable ids (nil key), since the requests it had queued carry none.
func (s *Service) nonceKey(ctx context.Context, resuming bool) (NonceKey, error) {
	key, ok, err := LoadNonceKey(ctx, s.js, s.cfg.Run)
	switch {
	case err != nil || ok:
		return key, err
	case resuming:
		s.cfg.Logger.Warn("run begun without a nonce key: its trajectory ids stay predictable", "run", s.cfg.Run)
		return nil, nil
	}
	key = make(NonceKey, nonceKeyBytes)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("learnersvc: nonce key: %w", err)
	}
	kv, err := streams.State(ctx, s.js)
	if err != nil {
		return nil, err
	}
	if _, err := kv.Create(ctx, nonceKeyName(s.cfg.Run), []byte(hex.EncodeToString(key))); errors.Is(err, jetstream.ErrKeyExists) {
		return s.nonceKey(ctx, resuming) // another start of this run made it first: use theirs
	} else if err != nil {
		return nil, fmt.Errorf("learnersvc: write nonce key: %w", err)
	}
	return key, nil
}
