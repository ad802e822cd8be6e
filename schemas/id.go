package schemas

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// maxIDPart is the longest run, source or producer name kept verbatim in an
// id; longer names are shortened and hashed.
const maxIDPart = 64

// TrajectoryID returns the deterministic id of the seq-th trajectory that
// producer published for run from source, e.g. "exp1.onpolicy.actor-0.42".
// It is readable, stable across releases, and safe as a Nats-Msg-Id header
// value: it has no spaces, control characters or other bytes outside
// [A-Za-z0-9_.~-].
//
// A part (run, source, producer) made only of [A-Za-z0-9_-] and at most 64
// bytes long appears as is. Any other part is replaced by its safe bytes
// (others become '_', at most 32 of them) followed by '~' and the first 12
// hex digits of its SHA-256, so distinct names still give distinct ids and
// the id never contains the separator '.' inside a part. A requester's
// nonce may follow as a fifth part (WithNonce).
func TrajectoryID(run string, source Source, producer string, seq uint64) string {
	var b strings.Builder
	b.Grow(len(run) + len(source) + len(producer) + 24)
	writeIDPart(&b, run)
	b.WriteByte('.')
	writeIDPart(&b, string(source))
	b.WriteByte('.')
	writeIDPart(&b, producer)
	b.WriteByte('.')
	b.WriteString(strconv.FormatUint(seq, 10))
	return b.String()
}

// writeIDPart writes s, escaped if it is not a plain name (see TrajectoryID).
func writeIDPart(b *strings.Builder, s string) {
	if s != "" && len(s) <= maxIDPart && isPlainName(s) {
		b.WriteString(s)
		return
	}
	const keep = maxIDPart / 2
	for i := 0; i < len(s) && i < keep; i++ {
		if isNameByte(s[i]) {
			b.WriteByte(s[i])
		} else {
			b.WriteByte('_')
		}
	}
	sum := sha256.Sum256([]byte(s))
	b.WriteByte('~')
	b.WriteString(hex.EncodeToString(sum[:6]))
}

func isPlainName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isNameByte(s[i]) {
			return false
		}
	}
	return true
}
