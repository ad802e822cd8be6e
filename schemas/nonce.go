package schemas

import "fmt"

// MaxNonceBytes is the longest nonce (RolloutRequest.Nonce,
// CyclePlan.Nonce): 32 hex digits, 128 bits.
const MaxNonceBytes = 32

// WithNonce returns a trajectory id (TrajectoryID) that carries a
// requester's nonce: id + "." + nonce, or id alone when nonce is empty.
// The nonce comes after the sequence number, and '.' sorts before every
// digit and letter, so ids with nonces sort — byte by byte, or naturally —
// exactly as the same ids without them: what is ordered by id (the
// buffer's ties, a PRM's source trajectories) is what it was before
// nonces, whatever the nonces.
func WithNonce(id, nonce string) string {
	if nonce == "" {
		return id
	}
	return id + "." + nonce
}

// CheckNonce reports whether s is a usable nonce: empty (none), or 1 to
// MaxNonceBytes lowercase letters and digits.
func CheckNonce(field, s string) error {
	if len(s) > MaxNonceBytes {
		return &ValidationError{Field: field, Reason: fmt.Sprintf("%d bytes, at most %d", len(s), MaxNonceBytes)}
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z') {
			return &ValidationError{Field: field, Reason: fmt.Sprintf("%q has %q at byte %d; use lowercase letters and digits", s, c, i)}
		}
	}
	return nil
}
