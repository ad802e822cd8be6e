package buffersvc

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
)

// Headers of a multi-part sample reply. Every part carries them; the Arrow
// IPC stream is the concatenation of the parts' payloads in part order.
const (
	// HeaderPart is "i/n": this is part i (1-based) of n.
	HeaderPart = "Rspo-Part"
	// HeaderRecords is the number of records in the whole reply.
	HeaderRecords = "Rspo-Records"
)

// headerReserve is room left in each message for the headers, subject and
// protocol line when cutting a reply to the server's max payload.
const headerReserve = 1024

// maxReplyBytes bounds a reassembled reply.
const maxReplyBytes = 64 << 20

// maxReplyParts bounds the parts of one reply: a part header claiming more
// would make the client allocate a slot per claimed part before any data
// arrived. Replies are cut at the server's max payload (1 MiB by default,
// 64 parts for the largest reply), so 4096 leaves servers with payloads
// down to 16 KiB room.
const maxReplyParts = 4096

// partSize is the payload size of one reply part for a server that accepts
// messages of maxPayload bytes.
func partSize(maxPayload int64) int {
	if maxPayload > 2*headerReserve {
		return int(maxPayload - headerReserve)
	}
	return int(max(maxPayload/2, 1))
}

// splitReply cuts data into parts of at most size bytes, each with its part
// headers. An empty reply is one empty part.
func splitReply(data []byte, size, records int) []*nats.Msg {
	n := max((len(data)+size-1)/size, 1)
	msgs := make([]*nats.Msg, n)
	for i := range n {
		lo, hi := i*size, min((i+1)*size, len(data))
		h := nats.Header{}
		h.Set(HeaderPart, fmt.Sprintf("%d/%d", i+1, n))
		h.Set(HeaderRecords, strconv.Itoa(records))
		h.Set(HeaderReplyFormat, ReplyFormatRecords)
		msgs[i] = &nats.Msg{Header: h, Data: data[lo:hi]}
	}
	return msgs
}

// assembler collects the parts of one reply, in any order.
type assembler struct {
	parts   [][]byte
	got     int
	size    int
	records int
}

// add takes one part and reports whether the reply is complete. It returns
// ErrBadReply for a part that does not fit the others.
func (a *assembler) add(m *nats.Msg) (bool, error) {
	i, n, err := parsePart(m.Header.Get(HeaderPart))
	if err != nil {
		return false, err
	}
	records, err := strconv.Atoi(m.Header.Get(HeaderRecords))
	if err != nil || records < 0 {
		return false, fmt.Errorf("%w: records header %q", ErrBadReply, m.Header.Get(HeaderRecords))
	}
	if a.parts == nil {
		a.parts, a.records = make([][]byte, n), records
	}
	switch {
	case n != len(a.parts) || records != a.records:
		return false, fmt.Errorf("%w: part %d/%d with %d records does not match %d parts with %d records",
			ErrBadReply, i, n, records, len(a.parts), a.records)
	case a.parts[i-1] != nil:
		return false, fmt.Errorf("%w: part %d/%d received twice", ErrBadReply, i, n)
	case a.size+len(m.Data) > maxReplyBytes:
		return false, fmt.Errorf("%w: reply exceeds %d bytes", ErrBadReply, maxReplyBytes)
	}
	a.parts[i-1] = m.Data
	if a.parts[i-1] == nil {
		a.parts[i-1] = []byte{}
	}
	a.got++
	a.size += len(m.Data)
	return a.got == n, nil
}

// bytes returns the reassembled payload: a reply of one part is that
// part's payload, not a copy.
func (a *assembler) bytes() []byte {
	if len(a.parts) == 1 {
		return a.parts[0]
	}
	out := make([]byte, 0, a.size)
	for _, p := range a.parts {
		out = append(out, p...)
	}
	return out
}

// parsePart parses "i/n" with 1 ≤ i ≤ n ≤ maxReplyParts.
func parsePart(v string) (i, n int, err error) {
	is, ns, ok := strings.Cut(v, "/")
	if ok {
		i, err = strconv.Atoi(is)
		if err == nil {
			n, err = strconv.Atoi(ns)
		}
	}
	if !ok || err != nil || i < 1 || i > n || n > maxReplyParts {
		return 0, 0, fmt.Errorf("%w: part header %q, want i/n", ErrBadReply, v)
	}
	return i, n, nil
}
